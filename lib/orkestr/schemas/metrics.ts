import { z } from "zod";
import { Num, Timestamp } from "./common";

/** One `samples[]` item of GET /v1/sandboxes/{id}/metrics; `t` may be RFC 3339 or unix seconds. */
export const MetricsSample = z.object({ t: Timestamp, cpu_percent: Num.nullish(), mem_bytes: Num.nullish() }).loose();
export type MetricsSample = z.infer<typeof MetricsSample>;

/**
 * GET /v1/sandboxes/{id}/metrics. A paused or terminated sandbox has null live usage and an
 * empty sample window, with `lifetime` still populated (seed 003).
 */
export const Metrics = z
  .object({
    sandbox_id: z.string().nullish(),
    sandbox_status: z.string().nullish(),
    sample_interval_seconds: Num.nullish(),
    cpu: z.object({ usage_percent: Num.nullish(), usage_cores: Num.nullish(), cores: Num.nullish() }).loose().nullish(),
    memory: z
      .object({ usage_bytes: Num.nullish(), usage_percent: Num.nullish(), limit_bytes: Num.nullish() })
      .loose()
      .nullish(),
    lifetime: z.object({ cpu_seconds: Num.nullish(), gb_seconds: Num.nullish() }).loose().nullish(),
    samples: z
      .array(MetricsSample)
      .nullish()
      .transform((s) => s ?? []),
  })
  .loose();
export type Metrics = z.infer<typeof Metrics>;
