import { z } from "zod";
import { Num } from "./common";

/** One entry of GET /v1/sandboxes/limits `sizes`: render as returned, never hard-code. */
export const SizeOption = z
  .object({ size: z.string(), cpu: Num.nullish(), memory_mb: Num.nullish(), allowed: z.boolean().nullish() })
  .loose();
export type SizeOption = z.infer<typeof SizeOption>;

/**
 * GET /v1/sandboxes/limits (alias /v1/limits). Every field is optional: the seed lists
 * some, the contract proposes more, and the local engine adds its own (capabilities, isolation).
 * `extra_*` names from older drafts are accepted beside the unprefixed ones.
 */
export const Limits = z
  .object({
    plan: z.string().nullish(),
    allowed_sizes: z.array(z.string()).nullish(),
    max_concurrent: Num.nullish(),
    ram_budget_mb: Num.nullish(),
    ram_used_mb: Num.nullish(),
    trial_credit_eur: Num.nullish(),
    trial_credit_used_eur: Num.nullish(),
    sizes: z.array(SizeOption).nullish(),
    regions: z.array(z.string()).nullish(),
    default_egress_domains: z.array(z.string()).nullish(),
    max_named_snapshots: Num.nullish(),
    running: Num.nullish(),
    paused: Num.nullish(),
    max_paused: Num.nullish(),
    max_timeout_seconds: Num.nullish(),
    max_running_seconds: Num.nullish(),
    network_open_allowed: z.boolean().nullish(),
    previews_allowed: z.boolean().nullish(),
    max_volumes: Num.nullish(),
    max_volume_gb: Num.nullish(),
    max_templates: Num.nullish(),
    sample_interval_seconds: Num.nullish(),
    capabilities: z.record(z.string(), z.unknown()).nullish(),
    engine: z.object({ name: z.string().nullish(), kind: z.string().nullish() }).loose().nullish(),
  })
  .loose();
export type Limits = z.infer<typeof Limits>;
