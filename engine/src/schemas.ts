import { z } from "zod";
import { SANDBOX_STATUSES } from "../../lib/orkestr/sandbox-statuses.js";

/**
 * The engine's strict reading of the contract's request bodies and queries. Unknown fields are
 * dropped (as FastAPI/pydantic does upstream); wrong types, unknown enums and missing fields are 422.
 */

/**
 * Strings that become a command line, an environment variable or a path on the host: a NUL byte
 * cannot be passed to exec (Node's spawn throws on it), so it is a 422 here, not a 500 later.
 */
export const noNul = (s: string) => !s.includes("\0");
const NUL_MESSAGE = "must not contain a NUL byte";

const domain = z
  .string()
  .min(1)
  .max(253)
  .regex(
    /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i,
    "must be a host name such as api.example.com or *.example.com",
  );

export const EnvMap = z
  .record(
    z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "env names are letters, digits and _"),
    z.string().max(32_768).refine(noNul, NUL_MESSAGE),
  )
  .refine((m) => Object.keys(m).length <= 200, "at most 200 env vars");

export const Metadata = z
  .record(z.string().min(1).max(128), z.string().max(1024))
  .refine((m) => Object.keys(m).length <= 50, "at most 50 metadata keys");

export const SizeName = z.enum(["small", "medium", "large"]);
export const NetworkMode = z.enum(["off", "restricted", "open"]);
export const OnTimeout = z.enum(["kill", "pause"]);

export const CreateSandboxBody = z
  .object({
    template: z.string().min(1).max(128).optional(),
    snapshot: z.string().min(1).max(128).optional(),
    size: SizeName.optional(),
    cpu: z.number().positive().max(64).optional(),
    memory_mb: z.number().int().min(64).max(131_072).optional(),
    network: NetworkMode.default("off"),
    allow_domains: z.array(domain).max(200).optional(),
    timeout_seconds: z.number().int().min(10).optional(),
    env: EnvMap.default({}),
    metadata: Metadata.default({}),
    region: z.string().min(1).max(32).nullable().optional(),
    volume: z
      .union([z.string().min(1).max(128), z.object({ id: z.string().min(1), mount_path: z.string().optional() })])
      .nullable()
      .optional(),
    on_timeout: OnTimeout.default("kill"),
    auto_resume: z.boolean().default(false),
    preview_auth: z.boolean().default(false),
  })
  .superRefine((b, ctx) => {
    if (!b.template && !b.snapshot)
      ctx.addIssue({
        code: "custom",
        path: ["template"],
        message: "template is required (or snapshot to restore one)",
      });
    if (b.allow_domains && b.network !== "restricted") {
      ctx.addIssue({
        code: "custom",
        path: ["allow_domains"],
        message: 'allow_domains only applies with network "restricted"',
      });
    }
  });
export type CreateSandboxBody = z.infer<typeof CreateSandboxBody>;

export const PatchSandboxBody = z.object({
  metadata: Metadata.optional(),
  timeout_seconds: z.number().int().min(10).optional(),
  auto_resume: z.boolean().optional(),
  on_timeout: OnTimeout.optional(),
});

export const SetTimeoutBody = z.object({ timeout_seconds: z.number().int().min(10) });
export const ResumeBody = z.object({ timeout_seconds: z.number().int().min(10).optional() }).default({});

export const SandboxStatus = z.enum(SANDBOX_STATUSES);

export const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50).describe("Page size"),
  cursor: z.string().max(64).optional().describe("The previous page's X-Next-Cursor header"),
});

export const ExecBody = z.object({
  command: z
    .string()
    .min(1)
    .max(256 * 1024)
    .refine(noNul, NUL_MESSAGE),
  cwd: z
    .string()
    .startsWith("/", "cwd must be an absolute path")
    .max(4096)
    .refine(noNul, NUL_MESSAGE)
    .default("/workspace"),
  env: EnvMap.default({}),
  timeout_seconds: z.number().positive().max(86_400).default(60),
  stdin: z
    .string()
    .max(10 * 1024 * 1024)
    .nullable()
    .optional(),
  stream: z.boolean().optional(),
  kill_on_disconnect: z.boolean().optional(),
});
export type ExecBody = z.infer<typeof ExecBody>;

export const SandboxIdParams = z.object({ id: z.string().min(1).max(64) });

// --- Named snapshots and volumes (/v1/snapshots, /v1/volumes) -----------------------------

/** Snapshot and volume names: accepted wherever an id is, so they may never look like one. */
const resourceName = (idPrefix: string) =>
  z
    .string()
    .min(1)
    .max(63)
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9._-]*$/,
      "names are letters, digits, '.', '_' and '-', starting with a letter or digit",
    )
    .refine((n) => !n.toLowerCase().startsWith(idPrefix), `names must not start with "${idPrefix}" (ids do)`);

export const ResourceIdParams = z.object({ id: z.string().min(1).max(128) });

export const CreateSnapshotBody = z.object({ name: resourceName("snap_") });
export const SnapshotListQuery = ListQuery.extend({ sandbox_id: z.string().max(64).optional() });

/** Seed 003: a volume lives "days (1-3650) or hours (1-24), one or the other"; null clears it. */
const lifetimeFields = {
  max_lifetime_hours: z.number().int().min(1).max(24).nullable().optional(),
  max_lifetime_days: z.number().int().min(1).max(3650).nullable().optional(),
};
function oneLifetime(
  b: { max_lifetime_hours?: number | null; max_lifetime_days?: number | null },
  ctx: z.RefinementCtx,
): void {
  if (typeof b.max_lifetime_hours === "number" && typeof b.max_lifetime_days === "number") {
    ctx.addIssue({
      code: "custom",
      path: ["max_lifetime_hours"],
      message: "give max_lifetime_hours or max_lifetime_days, not both",
    });
  }
}
/** The lifetime a body asks for, in hours: undefined = not mentioned, null = none. */
export function lifetimeHours(b: {
  max_lifetime_hours?: number | null;
  max_lifetime_days?: number | null;
}): number | null | undefined {
  if (typeof b.max_lifetime_hours === "number") return b.max_lifetime_hours;
  if (typeof b.max_lifetime_days === "number") return b.max_lifetime_days * 24;
  return b.max_lifetime_hours === null || b.max_lifetime_days === null ? null : undefined;
}

const VolumeSize = z.number().int().min(1).max(100);
export const CreateVolumeBody = z
  .object({
    name: resourceName("vol_"),
    size_gb: VolumeSize.default(10),
    region: z.string().min(1).max(32).nullable().optional(),
    ...lifetimeFields,
  })
  .superRefine(oneLifetime);
export const PatchVolumeBody = z
  .object({ name: resourceName("vol_").optional(), size_gb: VolumeSize.optional(), ...lifetimeFields })
  .superRefine(oneLifetime);
export const MoveVolumeBody = z.object({ region: z.string().min(1).max(32) });
export const VolumeListQuery = ListQuery.extend({
  region: z.string().max(32).optional(),
  status: z.enum(["creating", "available", "attached", "moving", "deleting", "error"]).optional(),
});
