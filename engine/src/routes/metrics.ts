import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { accountOf } from "../auth.js";
import type { EngineContext } from "../context.js";
import { parse } from "../lib/validate.js";
import { iso } from "../lib/time.js";
import { SandboxIdParams } from "../schemas.js";

const DEFAULT_WINDOW_MS = 5 * 60_000;

/** `since` as RFC 3339 or unix seconds (contract §3.5). */
const MetricsQuery = z.object({
  since: z
    .string()
    .optional()
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

export function metricsRoutes(app: FastifyInstance, ctx: EngineContext): void {
  // GET /v1/sandboxes/{id}/metrics – live CPU and memory from the sandbox's cgroup, samples, lifetime totals
  app.get("/sandboxes/:id/metrics", async (req) => {
    const { id } = parse(SandboxIdParams, req.params, "path");
    const { since } = parse(MetricsQuery, req.query, "query");
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
      // empty sample window, with lifetime still populated (seed SDK README; it wins over §3.5).
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
  });
}

function round(n: number, d: number): number {
  const f = 10 ** d;
  return Math.round(n * f) / f;
}
