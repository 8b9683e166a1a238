import { z } from "zod";

/**
 * What the engine answers, route by route: the response half of the route schemas. They feed the
 * OpenAPI document (docs/openapi.json) and, with ORKESTR_ENGINE_CHECK_RESPONSES=1 (every test
 * engine), are checked against each answer, so the document cannot describe fields the engine
 * does not send. Objects list the fields a client may rely on; they do not strip others.
 * Schemas with an `id` become named components of the document.
 */

const Time = z.string().describe("RFC 3339 UTC time");
const TimeOrNull = Time.nullable();

/** Every 4xx/5xx: `detail` is a sentence, or FastAPI's [{loc, msg, type}] for a 422. */
export const ErrorBody = z
  .object({
    detail: z.union([
      z.string(),
      z.array(z.object({ loc: z.array(z.union([z.string(), z.number()])), msg: z.string(), type: z.string() })),
    ]),
    code: z.string().describe("Machine-readable error code, e.g. sandbox_not_found"),
  })
  .meta({ id: "Error" });

export const Sandbox = z
  .object({
    id: z.string(),
    status: z.enum(["creating", "running", "pausing", "paused", "resuming", "terminated", "expired", "failed"]),
    template: z.string(),
    size: z.string(),
    cpu: z.number(),
    memory_mb: z.number(),
    network: z.enum(["off", "restricted", "open"]),
    allow_domains: z.array(z.string()).nullable(),
    region: z.string(),
    metadata: z.record(z.string(), z.string()),
    env_keys: z.array(z.string()).describe("Names only: values are never echoed"),
    timeout_seconds: z.number(),
    on_timeout: z.enum(["kill", "pause"]),
    auto_resume: z.boolean(),
    volume: z.object({ id: z.string(), name: z.string().nullable(), mount_path: z.string() }).nullable(),
    snapshot: z.string().nullable(),
    preview_auth: z.boolean(),
    preview_auth_token: z.string().nullable().optional().describe("Only in the create response"),
    preview_host_base: z.string().nullable(),
    created_at: Time,
    started_at: TimeOrNull,
    expires_at: TimeOrNull,
    paused_at: TimeOrNull,
    terminated_at: TimeOrNull,
    status_reason: z.string().nullable(),
  })
  .meta({ id: "Sandbox" });

export const TimeoutResult = z.object({ id: z.string(), timeout_seconds: z.number(), expires_at: TimeOrNull });

export const ExecResult = z
  .object({
    stdout: z.string(),
    stderr: z.string(),
    exit_code: z.number().nullable(),
    duration_ms: z.number(),
    timed_out: z.boolean(),
    truncated: z.boolean(),
  })
  .meta({ id: "ExecResult" });

const UsageFigures = { cpu_seconds: z.number(), gb_seconds: z.number(), cost_eur: z.number() };
export const UsageReport = z
  .object({
    currency: z.literal("EUR"),
    from: z.string(),
    to: z.string(),
    granularity: z.literal("day"),
    totals: z.object({ ...UsageFigures, sandboxes_created: z.number() }),
    trial_credit_eur: z.number().nullable(),
    trial_credit_used_eur: z.number(),
    series: z.array(z.object({ date: z.string(), ...UsageFigures, sandboxes_created: z.number() })),
    by_sandbox: z.array(
      z.object({ id: z.string(), template: z.string().nullable(), status: z.string().nullable(), ...UsageFigures }),
    ),
    prices: z.object({ vcpu_hour_eur: z.number(), gib_hour_eur: z.number() }),
  })
  .meta({ id: "UsageReport" });

const HostCapacity = z
  .object({
    memory_total_mb: z.number(),
    memory_reserved_mb: z.number().describe("Kept for the host, never given to sandboxes"),
    memory_for_sandboxes_mb: z.number().describe("memory_total_mb - memory_reserved_mb"),
    memory_committed_mb: z.number().describe("Live, paused and pooled sandboxes plus a queued or running build"),
    memory_paused_mb: z.number(),
    memory_pooled_mb: z.number(),
    pooled_sandboxes: z.number(),
    memory_builds_mb: z.number(),
    memory_free_mb: z.number().describe("What one more sandbox may have"),
    memory_available_now_mb: z.number().nullable(),
    pids_limit: z.number(),
    pids_reserved: z.number(),
    pids_used_by_host: z.number(),
    pids_committed: z.number(),
    pids_free: z.number(),
    disk_total_mb: z.number(),
    disk_free_mb: z.number(),
    disk_reserved_mb: z.number(),
    disk_committed_mb: z.number(),
    disk_available_mb: z.number().describe("What one more volume or template may take"),
    test_overrides: z.array(z.string()).describe("Figures set by test knobs (ORKESTR_ENGINE_HOST_*), not measured"),
  })
  .meta({ id: "HostCapacity" });

const Flags = z.record(z.string(), z.union([z.boolean(), z.string()]));
const Isolation = z
  .object({
    mode: z.enum(["bwrap-userns", "bwrap-root", "unavailable"]),
    running_as_root: z.boolean(),
    namespaces: z.record(z.string(), z.boolean()),
    per_sandbox_uid: z.boolean(),
    rootfs: Flags,
    cgroups: Flags,
    network: Flags,
    pause: z.enum(["freezer", "unavailable"]),
    seccomp: z.object({
      enforced: z.boolean(),
      policy: z.string().nullable(),
      blocked_abis: z.array(z.string()),
      filter_instructions: z.number().nullable(),
      reason: z.string().nullable(),
    }),
    proc: z
      .object({
        read_only: z.array(z.string()).describe("/proc paths bound read-only from the host's procfs"),
        masked: z.array(z.string()).describe("/proc paths replaced by an empty file or directory"),
      })
      .describe("What of /proc every sandbox, terminal and template build gets read-only or masked"),
    sys: z.literal("not mounted").describe("/sys is never mounted in a sandbox"),
    builds: z
      .object({
        user: z
          .enum(["userns-root", "unprivileged"])
          .describe(
            "userns-root: uid 0 inside the build's own user namespace only; unprivileged: the build slot's host uid",
          ),
        host_uids: z.string().describe("The host uids template builds run as (one per build slot), never 0"),
        idmapped_layers: z.literal(true),
      })
      .nullable()
      .describe("Who template build steps run as; null where custom templates are unavailable"),
    snapshots_include_memory: z.literal(false),
    kernel: z.string(),
    enforced: z.array(z.string()).describe("What this machine enforces, one sentence each"),
    degraded: z.array(z.string()).describe("What is weaker here than on a fully equipped host, and why"),
  })
  .describe("The local engine's isolation report: what this machine enforces for every sandbox")
  .meta({ id: "Isolation" });

export const Limits = z
  .object({
    plan: z.string(),
    account: z.object({ id: z.string(), name: z.string() }),
    allowed_sizes: z.array(z.string()),
    max_concurrent: z.number(),
    ram_budget_mb: z.number(),
    effective_ram_budget_mb: z.number(),
    ram_used_mb: z.number(),
    trial_credit_eur: z.number().nullable(),
    trial_credit_used_eur: z.number(),
    trial_is_hard_limit: z
      .boolean()
      .describe("true: creates answer 402 trial_exhausted once the credit is used; false: usage is billed past it"),
    sizes: z.array(
      z
        .object({
          size: z.string(),
          cpu: z.number(),
          memory_mb: z.number(),
          allowed: z.boolean().describe("Whether the plan offers this size"),
          fits_host: z
            .boolean()
            .nullable()
            .describe("Whether this machine's RAM for sandboxes could hold one (null: no host measured)"),
          reason: z.string().nullable().describe("Why a create of this size is refused, or null"),
        })
        .loose(),
    ),
    regions: z.array(z.string()),
    default_egress_domains: z.array(z.string()),
    max_named_snapshots: z.number().nullable(),
    running: z.number(),
    paused: z.number(),
    max_paused: z.number().nullable(),
    max_timeout_seconds: z.number(),
    max_running_seconds: z.number().nullable(),
    network_open_allowed: z.boolean(),
    previews_allowed: z.boolean(),
    max_volumes: z.number().nullable(),
    max_volume_gb: z.number().nullable(),
    named_snapshots: z.number(),
    volumes: z.number(),
    default_volume_size_gb: z.number(),
    volume_size_enforced: z.boolean(),
    snapshots_include_memory: z.boolean(),
    max_templates: z.number().nullable(),
    templates: z.number(),
    sample_interval_seconds: z.number(),
    warm_pool: z
      .object({
        size: z.number().describe("Booted sandboxes kept ready per pooled template (0: no pool)"),
        templates: z.array(z.string()),
        ready: z.number(),
        booting: z.number(),
      })
      .describe(
        'The machine\'s warm pool: a create of a pooled template, size small, network "off", without snapshot or volume, takes a ready sandbox instead of booting one',
      ),
    host_capacity: HostCapacity.nullable().describe(
      "This machine's clamp, shared by every account: what it keeps for the host and what sandboxes, builds and volumes hold",
    ),
    isolation: Isolation,
    capabilities: z.record(z.string(), z.unknown()),
    engine: z.object({ name: z.string(), kind: z.string() }),
  })
  .loose()
  .meta({ id: "Limits" });

export const Metrics = z
  .object({
    sandbox_id: z.string(),
    sandbox_status: z.string(),
    sample_interval_seconds: z.number(),
    lifetime: z.object({ cpu_seconds: z.number(), gb_seconds: z.number() }),
    cpu: z.object({ usage_percent: z.number().nullable(), usage_cores: z.number().nullable(), cores: z.number() }),
    memory: z.object({
      usage_bytes: z.number().nullable(),
      usage_percent: z.number().nullable(),
      limit_bytes: z.number(),
    }),
    samples: z.array(z.object({ t: Time, cpu_percent: z.number(), mem_bytes: z.number() })),
  })
  .meta({ id: "Metrics" });

export const Event = z
  .object({ id: z.string(), t: Time, type: z.string(), data: z.record(z.string(), z.unknown()) })
  .meta({ id: "Event" });

export const DirEntry = z
  .object({
    name: z.string(),
    path: z.string(),
    is_dir: z.boolean(),
    type: z.enum(["file", "directory", "symlink", "other"]),
    size: z.number(),
    modified_at: Time,
  })
  .meta({ id: "DirEntry" });

/** GET …/files: the file (base64), the directory with its entries, or (list=true) the entries alone. */
export const FileRead = z.union([
  z.object({
    path: z.string(),
    type: z.literal("file"),
    size: z.number(),
    content: z.string(),
    encoding: z.literal("base64"),
    modified_at: Time,
  }),
  z.object({
    path: z.string(),
    type: z.literal("directory"),
    entries: z.array(DirEntry),
    truncated: z.boolean().optional(),
  }),
  z.array(DirEntry),
]);
export const FileWritten = z.object({ path: z.string(), size: z.number() });
export const BatchResult = z.object({
  written: z.array(FileWritten),
  errors: z.array(z.object({ path: z.string(), detail: z.string(), code: z.string() })),
});
export const PresignedUrl = z.object({
  url: z.string(),
  method: z.enum(["GET", "PUT"]),
  headers: z.record(z.string(), z.string()).optional(),
  expires_at: Time,
});

export const Preview = z.object({
  port: z.number(),
  host: z.string(),
  url: z.string(),
  auth_required: z.boolean(),
  listening: z.boolean().nullable(),
});
export const PreviewToken = z.object({ preview_auth_token: z.string() });

export const PtySession = z
  .object({
    id: z.string(),
    sandbox_id: z.string(),
    status: z.enum(["running", "exited"]),
    command: z.string(),
    cwd: z.string(),
    cols: z.number(),
    rows: z.number(),
    viewers: z.number(),
    ws_path: z.string(),
    created_at: Time,
    exited_at: TimeOrNull,
    exit_code: z.number().nullable(),
    signal: z.string().nullable(),
  })
  .meta({ id: "PtySession" });
export const PtySignalResult = z.object({ id: z.string(), signal: z.string(), delivered: z.boolean() });

export const Snapshot = z
  .object({
    id: z.string(),
    name: z.string(),
    sandbox_id: z.string(),
    template: z.string(),
    region: z.string(),
    size_mb: z.number(),
    status: z.string(),
    created_at: Time,
    sandbox_size: z.string(),
    memory_captured: z.literal(false),
    captured_paths: z.array(z.string()),
    frozen_ms: z.number().nullable(),
  })
  .meta({ id: "Snapshot" });

export const Volume = z
  .object({
    id: z.string(),
    name: z.string(),
    size_gb: z.number(),
    size_mb: z.number().describe("Space used"),
    status: z.enum(["creating", "available", "attached", "moving", "deleting", "error"]),
    region: z.string(),
    attached_sandbox_id: z.string().nullable(),
    mount_path: z.string(),
    max_lifetime_hours: z.number().nullable(),
    max_lifetime_days: z.number().nullable(),
    expires_at: TimeOrNull,
    created_at: Time,
    updated_at: Time,
    size_enforced: z.boolean(),
  })
  .meta({ id: "Volume" });

const TemplateStatus = z.enum(["queued", "building", "ready", "failed"]);
const TemplateError = z.object({
  step_index: z.number().nullable(),
  step: z.string().nullable(),
  exit_code: z.number().nullable(),
  output: z.string(),
});
export const Template = z
  .object({
    id: z.string(),
    name: z.string(),
    base_image: z.string(),
    steps: z.array(z.string()),
    env_keys: z.array(z.string()),
    status: TemplateStatus,
    builtin: z.literal(false),
    size_mb: z.number().nullable(),
    error: TemplateError.nullable(),
    created_at: Time,
    started_at: TimeOrNull,
    ready_at: TimeOrNull,
    finished_at: TimeOrNull,
  })
  .meta({ id: "Template" });
/** ?include_builtin=true puts the base images first in the template list. */
export const BuiltinTemplate = z
  .object({
    id: z.string(),
    name: z.string(),
    builtin: z.literal(true),
    status: z.literal("ready"),
    description: z.string(),
    available: z.boolean(),
  })
  .meta({ id: "BuiltinTemplate" });
export const TemplateLogLine = z.object({
  seq: z.number(),
  t: Time,
  step_index: z.number().nullable(),
  stream: z.string(),
  data: z.string(),
});
/** A page of build log lines; the next page starts at next_cursor, and done says the build finished. */
export const TemplateLogs = z
  .object({
    template_id: z.string(),
    status: TemplateStatus,
    lines: z.array(TemplateLogLine),
    next_cursor: z.number(),
    done: z.boolean(),
  })
  .meta({ id: "TemplateLogs" });
export const BaseImage = z.object({
  id: z.string(),
  description: z.string(),
  maps_to: z.string(),
  available: z.boolean(),
  gaps: z.array(z.string()),
});

export const Webhook = z
  .object({
    id: z.string(),
    url: z.string(),
    event_types: z.array(z.string()),
    description: z.string().nullable(),
    enabled: z.boolean(),
    consecutive_failures: z.number(),
    disabled_reason: z.string().nullable(),
    created_at: Time,
    updated_at: Time,
  })
  .meta({ id: "Webhook" });
/** Create and rotate-secret: the whsec_ signing secret, shown this once. */
export const WebhookWithSecret = Webhook.extend({ secret: z.string() }).meta({ id: "WebhookWithSecret" });
export const Delivery = z
  .object({
    id: z.string(),
    webhook_id: z.string(),
    event_id: z.string(),
    event_type: z.string(),
    status: z.enum(["pending", "succeeded", "failed"]),
    attempts: z.number(),
    max_attempts: z.number(),
    response_status: z.number().nullable(),
    duration_ms: z.number().nullable(),
    error: z.string().nullable(),
    redelivered_from: z.string().nullable(),
    created_at: Time,
    last_attempt_at: TimeOrNull,
    next_attempt_at: TimeOrNull,
  })
  .meta({ id: "Delivery" });
export const DeliveryDetail = Delivery.extend({
  request_body: z.string(),
  response_body_excerpt: z.string().nullable(),
}).meta({ id: "DeliveryDetail" });
export const DeliveryQueued = z.object({ delivery_id: z.string() });

/** A 204: no body. */
export const NoContent = z.undefined().describe("No content");
