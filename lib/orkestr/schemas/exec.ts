import { z } from "zod";
import { Num } from "./common";

/** POST /v1/sandboxes/{id}/exec and /exec/stream: the request body. */
export const ExecBody = z.object({
  command: z.string().min(1),
  cwd: z.string().startsWith("/", "cwd must be an absolute path").optional(),
  env: z.record(z.string(), z.string()).optional(),
  timeout_seconds: z.number().positive().optional(),
  stdin: z.string().nullable().optional(),
  kill_on_disconnect: z.boolean().optional(),
});
export type ExecBody = z.input<typeof ExecBody>;

/** POST /v1/sandboxes/{id}/exec's answer. A non-zero `exit_code` is a normal 200 result, not an error. */
export const ExecResult = z
  .object({
    stdout: z
      .string()
      .nullish()
      .transform((s) => s ?? ""),
    stderr: z
      .string()
      .nullish()
      .transform((s) => s ?? ""),
    exit_code: z
      .number()
      .int()
      .nullish()
      .transform((c) => c ?? null),
    duration_ms: Num.nullish(),
    timed_out: z.boolean().nullish(),
    truncated: z.boolean().nullish(),
  })
  .loose();
export type ExecResult = z.infer<typeof ExecResult>;

/**
 * Any frame of an exec stream, as it comes off the wire. Output chunks carry `stream` + `data`
 * (+ `encoding: "base64"` for bytes that are not UTF-8); the final frame carries `is_final`,
 * `exit_code`, `duration_ms`, or `error` + `code` when the run broke after it started.
 * Other providers' spellings (`{"stdout": "..."}`, `finished`: Superserve, Declaw) are accepted too.
 */
export const ExecChunk = z
  .object({
    stream: z.string().nullish(),
    data: z.string().nullish(),
    encoding: z.string().nullish(),
    stdout: z.string().nullish(),
    stderr: z.string().nullish(),
    is_final: z.boolean().nullish(),
    finished: z.boolean().nullish(),
    exit_code: z.number().int().nullish(),
    duration_ms: Num.nullish(),
    timed_out: z.boolean().nullish(),
    error: z.unknown().optional(),
    code: z.unknown().optional(),
  })
  .loose();
export type ExecChunk = z.infer<typeof ExecChunk>;
