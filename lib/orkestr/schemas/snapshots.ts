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
  })
  .loose();
export type Snapshot = z.infer<typeof Snapshot>;

export const CreateSnapshotBody = z.object({ name: z.string().min(1).max(128).optional() });
export type CreateSnapshotBody = z.input<typeof CreateSnapshotBody>;

export const ListSnapshotsQuery = ListQuery.extend({ sandbox_id: z.string().optional() });
export type ListSnapshotsQuery = z.input<typeof ListSnapshotsQuery>;
