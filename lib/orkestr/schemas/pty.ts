import { z } from "zod";
import { Num, openEnum, Timestamp } from "./common";

/** An interactive terminal session (Baton extension, `capabilities.pty` in limits). */
export const PtySession = z
  .object({
    id: z.string(),
    sandbox_id: z.string().nullish(),
    status: openEnum(["running", "exited"]),
    command: z.string().nullish(),
    cwd: z.string().nullish(),
    cols: Num.nullish(),
    rows: Num.nullish(),
    viewers: Num.nullish(),
    ws_path: z.string().nullish(),
    created_at: Timestamp.nullish(),
    exited_at: Timestamp.nullish(),
    exit_code: z.number().int().nullish(),
    signal: z.string().nullish(),
  })
  .loose();
export type PtySession = z.infer<typeof PtySession>;

export const OpenPtyBody = z.object({
  cols: z.number().int().min(1).optional(),
  rows: z.number().int().min(1).optional(),
  command: z.string().min(1).optional(),
  cwd: z.string().startsWith("/").optional(),
  env: z.record(z.string(), z.string()).optional(),
});
export type OpenPtyBody = z.input<typeof OpenPtyBody>;

export const ResizePtyBody = z.object({ cols: z.number().int().min(1), rows: z.number().int().min(1) });
export type ResizePtyBody = z.input<typeof ResizePtyBody>;

export const PtySignalResult = z
  .object({ id: z.string().nullish(), signal: z.string().nullish(), delivered: z.boolean().nullish() })
  .loose();
export type PtySignalResult = z.infer<typeof PtySignalResult>;

/** Text frames on the terminal WebSocket are JSON control messages. */
export const PtyControlMessage = z
  .object({
    type: openEnum(["exit", "error", "input", "resize", "signal"]),
    exit_code: z.number().int().nullish(),
    signal: z.string().nullish(),
    message: z.string().nullish(),
  })
  .loose();
export type PtyControlMessage = z.infer<typeof PtyControlMessage>;
