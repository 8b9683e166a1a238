import { z } from "zod";
import { ListQuery, Num, openEnum, StringMap, Timestamp } from "./common";
import { SANDBOX_STATUSES } from "../sandbox-statuses";

export { SANDBOX_STATUSES };
/** The sandbox object's `status` (unknown values are kept). */
export const SandboxStatus = openEnum(SANDBOX_STATUSES);
export type SandboxStatus = z.infer<typeof SandboxStatus>;

export const SIZES = ["small", "medium", "large"] as const;
export const SizeName = openEnum(SIZES);
export type SizeName = z.infer<typeof SizeName>;

export const NETWORK_MODES = ["off", "restricted", "open"] as const;
export const NetworkMode = openEnum(NETWORK_MODES);
export type NetworkMode = z.infer<typeof NetworkMode>;

/** A volume attached to a sandbox: the seed shows a bare name, the contract an object. */
export const SandboxVolume = z.union([
  z.string(),
  z.object({ id: z.string().nullish(), name: z.string().nullish(), mount_path: z.string().nullish() }).loose(),
]);
export type SandboxVolume = z.infer<typeof SandboxVolume>;

/**
 * The sandbox object (GET /v1/sandboxes/{id}; create, list, pause and resume return it too), read
 * tolerantly: only `id` and `status` are required.
 */
export const Sandbox = z
  .object({
    id: z.string(),
    status: SandboxStatus,
    template: z.string().nullish(),
    size: z.string().nullish(),
    cpu: Num.nullish(),
    memory_mb: Num.nullish(),
    network: NetworkMode.nullish(),
    allow_domains: z.array(z.string()).nullish(),
    region: z.string().nullish(),
    metadata: StringMap.nullish(),
    env_keys: z.array(z.string()).nullish(),
    timeout_seconds: Num.nullish(),
    on_timeout: openEnum(["kill", "pause"]).nullish(),
    auto_resume: z.boolean().nullish(),
    volume: SandboxVolume.nullish(),
    snapshot: z.string().nullish(),
    preview_auth: z.boolean().nullish(),
    /** Returned only on create (and rotate); never stored by the console. */
    preview_auth_token: z.string().nullish(),
    /** Port-less preview host suffix (seed 003), e.g. `sbx_….sbx.orkestr.run`. */
    preview_host_base: z.string().nullish(),
    created_at: Timestamp.nullish(),
    started_at: Timestamp.nullish(),
    expires_at: Timestamp.nullish(),
    paused_at: Timestamp.nullish(),
    terminated_at: Timestamp.nullish(),
    status_reason: z.string().nullish(),
  })
  .loose();
export type Sandbox = z.infer<typeof Sandbox>;

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "env names are letters, digits and _");

/** POST /v1/sandboxes body. `template` or `snapshot` is required. */
export const CreateSandboxBody = z
  .object({
    template: z.string().min(1).optional(),
    snapshot: z.string().min(1).optional(),
    size: z.enum(SIZES).optional(),
    cpu: z.number().positive().optional(),
    memory_mb: z.number().int().positive().optional(),
    network: z.enum(NETWORK_MODES).optional(),
    allow_domains: z.array(z.string().min(1)).optional(),
    timeout_seconds: z.number().int().min(10).optional(),
    env: z.record(envName, z.string()).optional(),
    metadata: z.record(z.string().min(1), z.string()).optional(),
    region: z.string().min(1).nullable().optional(),
    volume: z
      .union([z.string().min(1), z.object({ id: z.string().min(1), mount_path: z.string().optional() })])
      .nullable()
      .optional(),
    on_timeout: z.enum(["kill", "pause"]).optional(),
    auto_resume: z.boolean().optional(),
    preview_auth: z.boolean().optional(),
  })
  .refine((b) => b.template !== undefined || b.snapshot !== undefined, {
    message: "template is required (or snapshot to restore one)",
    path: ["template"],
  })
  .refine((b) => b.allow_domains === undefined || b.network === "restricted", {
    message: 'allow_domains only applies with network "restricted"',
    path: ["allow_domains"],
  });
export type CreateSandboxBody = z.input<typeof CreateSandboxBody>;

/** PATCH /v1/sandboxes/{id}. */
export const UpdateSandboxBody = z.object({
  metadata: z.record(z.string().min(1), z.string()).optional(),
  timeout_seconds: z.number().int().min(10).optional(),
  auto_resume: z.boolean().optional(),
  on_timeout: z.enum(["kill", "pause"]).optional(),
});
export type UpdateSandboxBody = z.input<typeof UpdateSandboxBody>;

/** POST /v1/sandboxes/{id}/resume (body optional). */
export const ResumeSandboxBody = z.object({ timeout_seconds: z.number().int().min(10).optional() });
export type ResumeSandboxBody = z.input<typeof ResumeSandboxBody>;

/** POST /v1/sandboxes/{id}/timeout. */
export const SetTimeoutBody = z.object({ timeout_seconds: z.number().int().min(10) });
export type SetTimeoutBody = z.input<typeof SetTimeoutBody>;

/** The answer to set_timeout: `{id, timeout_seconds, expires_at}` (a server may send the whole sandbox). */
export const SetTimeoutResult = z
  .object({ id: z.string().nullish(), timeout_seconds: Num.nullish(), expires_at: Timestamp.nullish() })
  .loose();
export type SetTimeoutResult = z.infer<typeof SetTimeoutResult>;

/** GET /v1/sandboxes query: statuses (comma-joined on the wire), metadata (`metadata[k]=v`). */
export const ListSandboxesQuery = ListQuery.extend({
  status: z.union([z.string(), z.array(z.string())]).optional(),
  metadata: z.record(z.string(), z.string()).optional(),
  template: z.string().optional(),
  region: z.string().optional(),
  /** Only the forks of this named snapshot (id or name): the engine's filter; elsewhere check each sandbox's `snapshot`. */
  snapshot: z.string().optional(),
});
export type ListSandboxesQuery = z.input<typeof ListSandboxesQuery>;
