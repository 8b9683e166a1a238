import { z } from "zod";
import { ListQuery, Num, openEnum, Timestamp } from "./common";

/** A named snapshot: POST /v1/sandboxes/{id}/snapshots, GET /v1/snapshots[/{id}]. */
export const Snapshot = z
  .object({
    id: z.string(),
    name: z.string().nullish(),
    sandbox_id: z.string().nullish(),
    template: z.string().nullish(),
    region: z.string().nullish(),
    size_mb: Num.nullish(),
    status: openEnum(["creating", "ready", "failed"]).nullish(),
    created_at: Timestamp.nullish(),
    // What a fork inherits, when the server says (the local engine does; the contract is silent):
    // whether memory was captured, which paths were copied, the source's size, how long it was frozen.
    memory_captured: z.boolean().nullish(),
    captured_paths: z.array(z.string()).nullish(),
    sandbox_size: z.string().nullish(),
    frozen_ms: Num.nullish(),
  })
  .loose();
export type Snapshot = z.infer<typeof Snapshot>;

export const CreateSnapshotBody = z.object({ name: z.string().min(1).max(128).optional() });
export type CreateSnapshotBody = z.input<typeof CreateSnapshotBody>;

export const ListSnapshotsQuery = ListQuery.extend({ sandbox_id: z.string().optional() });
export type ListSnapshotsQuery = z.input<typeof ListSnapshotsQuery>;
