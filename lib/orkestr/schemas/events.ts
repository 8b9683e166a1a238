import { z } from "zod";
import { ListQuery, Timestamp } from "./common";

export const SANDBOX_EVENT_TYPES = [
  "sandbox.created",
  "sandbox.paused",
  "sandbox.resumed",
  "sandbox.terminated",
  "sandbox.expired",
  "sandbox.failed",
  "exec",
  "exec.stream",
  "file.write",
  "file.delete",
  "snapshot.created",
  "timeout.updated",
] as const;

/**
 * One entry of a sandbox's activity timeline (GET /v1/sandboxes/{id}/events). The contract calls the time `t`; webhook
 * payloads call it `created_at`: both are accepted.
 */
export const SandboxEvent = z
  .object({
    id: z.string().nullish(),
    t: Timestamp.nullish(),
    created_at: Timestamp.nullish(),
    type: z.string().transform((s): (typeof SANDBOX_EVENT_TYPES)[number] | (string & {}) => s),
    data: z
      .record(z.string(), z.unknown())
      .nullish()
      .transform((d) => d ?? {}),
  })
  .loose();
export type SandboxEvent = z.infer<typeof SandboxEvent>;

export const ListEventsQuery = ListQuery.extend({ type: z.union([z.string(), z.array(z.string())]).optional() });
export type ListEventsQuery = z.input<typeof ListEventsQuery>;
