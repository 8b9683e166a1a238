import { z } from "zod";
import { ListQuery, Num, openEnum, Timestamp } from "./common";

/** A persistent volume: POST/GET /v1/volumes, GET/PATCH /v1/volumes/{id} (mounts at /persist, seed 003). */
export const Volume = z
  .object({
    id: z.string(),
    name: z.string().nullish(),
    size_gb: Num.nullish(),
    size_mb: Num.nullish(),
    status: openEnum(["creating", "available", "attached", "moving", "deleting", "error"]).nullish(),
    region: z.string().nullish(),
    attached_sandbox_id: z.string().nullish(),
    max_lifetime_hours: Num.nullish(),
    max_lifetime_days: Num.nullish(),
    expires_at: Timestamp.nullish(),
    created_at: Timestamp.nullish(),
    updated_at: Timestamp.nullish(),
    mount_path: z.string().nullish(),
    /** The local engine: false where a volume is a plain directory (its size is recorded, not a cap). */
    size_enforced: z.boolean().nullish(),
  })
  .loose();
export type Volume = z.infer<typeof Volume>;

export const CreateVolumeBody = z.object({
  name: z.string().min(1).max(128),
  size_gb: z.number().int().min(1).optional(),
  region: z.string().min(1).optional(),
  max_lifetime_days: z.number().int().min(1).max(3650).optional(),
  max_lifetime_hours: z.number().int().min(1).max(24).optional(),
});
export type CreateVolumeBody = z.input<typeof CreateVolumeBody>;

export const UpdateVolumeBody = z.object({
  name: z.string().min(1).max(128).optional(),
  size_gb: z.number().int().min(1).optional(),
  max_lifetime_days: z.number().int().min(1).max(3650).nullable().optional(),
  max_lifetime_hours: z.number().int().min(1).max(24).nullable().optional(),
});
export type UpdateVolumeBody = z.input<typeof UpdateVolumeBody>;

export const MoveVolumeBody = z.object({ region: z.string().min(1) });
export type MoveVolumeBody = z.input<typeof MoveVolumeBody>;

export const ListVolumesQuery = ListQuery.extend({ region: z.string().optional(), status: z.string().optional() });
export type ListVolumesQuery = z.input<typeof ListVolumesQuery>;
