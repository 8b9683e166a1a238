import { z } from "zod";
import { Num } from "./common";

/**
 * One entry of GET /v1/sandboxes/limits `sizes`: render as returned, never hard-code. `fits_host`
 * and `reason` are the local engine's (why a size is refused: the plan, or this machine's RAM).
 */
export const SizeOption = z
  .object({
    size: z.string(),
    cpu: Num.nullish(),
    memory_mb: Num.nullish(),
    allowed: z.boolean().nullish(),
    fits_host: z.boolean().nullish(),
    reason: z.string().nullish(),
  })
  .loose();
export type SizeOption = z.infer<typeof SizeOption>;

/**
 * The local engine's host clamp (`host_capacity`): the machine's RAM, pids and disk, what it keeps
 * for itself and what sandboxes, builds and volumes hold. Shared by every account of that engine.
 */
export const HostCapacity = z
  .object({
    memory_total_mb: Num.nullish(),
    memory_reserved_mb: Num.nullish(),
    memory_for_sandboxes_mb: Num.nullish(),
    memory_committed_mb: Num.nullish(),
    memory_paused_mb: Num.nullish(),
    memory_pooled_mb: Num.nullish(),
    pooled_sandboxes: Num.nullish(),
    memory_builds_mb: Num.nullish(),
    memory_free_mb: Num.nullish(),
    pids_limit: Num.nullish(),
    pids_reserved: Num.nullish(),
    pids_used_by_host: Num.nullish(),
    pids_committed: Num.nullish(),
    pids_free: Num.nullish(),
    disk_total_mb: Num.nullish(),
    disk_free_mb: Num.nullish(),
    disk_reserved_mb: Num.nullish(),
    disk_committed_mb: Num.nullish(),
    disk_available_mb: Num.nullish(),
    test_overrides: z.array(z.string()).nullish(),
  })
  .loose();
export type HostCapacity = z.infer<typeof HostCapacity>;

/** The local engine's isolation report (`isolation`): what this machine enforces, and what is weaker. */
export const Isolation = z
  .object({
    mode: z.string().nullish(),
    kernel: z.string().nullish(),
    seccomp: z.object({ enforced: z.boolean().nullish(), reason: z.string().nullish() }).loose().nullish(),
    /** What of /proc every sandbox, terminal and build gets read-only or masked. */
    proc: z
      .object({ read_only: z.array(z.string()).nullish(), masked: z.array(z.string()).nullish() })
      .loose()
      .nullish(),
    sys: z.string().nullish(),
    /** Who template build steps run as (null: custom templates unavailable). */
    builds: z.object({ user: z.string().nullish(), host_uids: z.string().nullish() }).loose().nullish(),
    enforced: z.array(z.string()).nullish(),
    degraded: z.array(z.string()).nullish(),
  })
  .loose();
export type Isolation = z.infer<typeof Isolation>;

/**
 * GET /v1/sandboxes/limits (alias /v1/limits). Every field is optional: the seed lists
 * some, the contract proposes more, and the local engine adds its own (capabilities, isolation).
 * `extra_*` names from older drafts are accepted beside the unprefixed ones.
 */
export const Limits = z
  .object({
    plan: z.string().nullish(),
    account: z.object({ id: z.string().nullish(), name: z.string().nullish() }).loose().nullish(),
    allowed_sizes: z.array(z.string()).nullish(),
    max_concurrent: Num.nullish(),
    ram_budget_mb: Num.nullish(),
    effective_ram_budget_mb: Num.nullish(),
    ram_used_mb: Num.nullish(),
    trial_credit_eur: Num.nullish(),
    trial_credit_used_eur: Num.nullish(),
    trial_is_hard_limit: z.boolean().nullish(),
    sizes: z.array(SizeOption).nullish(),
    regions: z.array(z.string()).nullish(),
    default_egress_domains: z.array(z.string()).nullish(),
    max_named_snapshots: Num.nullish(),
    named_snapshots: Num.nullish(),
    running: Num.nullish(),
    paused: Num.nullish(),
    max_paused: Num.nullish(),
    max_timeout_seconds: Num.nullish(),
    max_running_seconds: Num.nullish(),
    network_open_allowed: z.boolean().nullish(),
    previews_allowed: z.boolean().nullish(),
    max_volumes: Num.nullish(),
    volumes: Num.nullish(),
    max_volume_gb: Num.nullish(),
    max_templates: Num.nullish(),
    templates: Num.nullish(),
    sample_interval_seconds: Num.nullish(),
    host_capacity: HostCapacity.nullish(),
    isolation: Isolation.nullish(),
    capabilities: z.record(z.string(), z.unknown()).nullish(),
    engine: z.object({ name: z.string().nullish(), kind: z.string().nullish() }).loose().nullish(),
  })
  .loose();
export type Limits = z.infer<typeof Limits>;
