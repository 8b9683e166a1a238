import { z } from "zod";
import { accountOf } from "../auth.js";
import { iso } from "../lib/time.js";
import { Metrics } from "../responses.js";
import { SandboxIdParams } from "../schemas.js";
import type { ResourcePlugin } from "./plugin.js";

const DEFAULT_WINDOW_MS = 5 * 60_000;

/** GET /v1/sandboxes/:id/metrics, query `since`: RFC 3339 or unix seconds. */
const MetricsQuery = z.object({
  since: z
    .string()
    .optional()
    .describe("Samples after this time: RFC 3339 or unix seconds (default: the last 5 minutes)")
    .transform((s, ctx) => {
      if (s === undefined || s === "") return undefined;
      const ms = /^\d+(\.\d+)?$/.test(s) ? Number(s) * 1000 : Date.parse(s);
      if (Number.isNaN(ms)) {
        ctx.addIssue({ code: "custom", message: "since must be an RFC 3339 time or unix seconds" });
        return z.NEVER;
      }
      return ms;
    }),
});

export const metricsRoutes: ResourcePlugin = async (app, { ctx }) => {
  app.get(
    "/sandboxes/:id/metrics",
    {
      schema: {
        tags: ["metrics"],
        summary: "Live CPU and memory from the sandbox's cgroup, recent samples, lifetime totals",
        params: SandboxIdParams,
        querystring: MetricsQuery,
        response: { 200: Metrics },
      },
    },
    async (req) => {
      const { id } = req.params;
      const { since } = req.query;
      const row = ctx.sandboxes.getRow(accountOf(req), id);
      const meter = ctx.sandboxes.meter(row.id);
      const base = {
        sandbox_id: row.id,
        sandbox_status: row.status,
        sample_interval_seconds: ctx.config.sampleMs / 1000,
        lifetime: {
          cpu_seconds: round(meter?.cpuSeconds ?? row.cpu_seconds, 3),
          gb_seconds: round(meter?.gbSeconds ?? row.gb_seconds, 3),
        },
      };
      const limitBytes = row.memory_mb * 1024 * 1024;
      if (!meter || row.status !== "running") {
        // Telemetry, not a state change: a paused or terminated sandbox has null live usage and an
        // empty sample window, with lifetime still populated (the seed SDK README; it wins over the
        // contract's metrics section).
        return {
          ...base,
          cpu: { usage_percent: null, usage_cores: null, cores: row.cpu },
          memory: { usage_bytes: null, usage_percent: null, limit_bytes: limitBytes },
          samples: [],
        };
      }
      const samples = meter.samples(since ?? Date.now() - DEFAULT_WINDOW_MS);
      return {
        ...base,
        cpu: { usage_percent: meter.last.usage_percent, usage_cores: meter.last.usage_cores, cores: row.cpu },
        memory: {
          usage_bytes: meter.last.mem_bytes,
          usage_percent: round((meter.last.mem_bytes / limitBytes) * 100, 2),
          limit_bytes: limitBytes,
        },
        samples: samples.map((s) => ({ t: iso(s.t), cpu_percent: s.cpu_percent, mem_bytes: s.mem_bytes })),
      };
    },
  );
};

function round(n: number, d: number): number {
  const f = 10 ** d;
  return Math.round(n * f) / f;
}
