import type { FastifyInstance, FastifyRequest } from "fastify";
import { accountOf } from "../auth.js";
import type { EngineContext } from "../context.js";
import { parse } from "../lib/validate.js";
import { DEFAULT_EGRESS_DOMAINS, REGIONS, SIZES } from "../plans.js";
import { effectiveRamBudgetMb, maxConcurrent } from "../services/admission.js";
import { PIDS_MAX } from "../services/sandboxes.js";
import {
  CreateSandboxBody,
  ListQuery,
  PatchSandboxBody,
  ResumeBody,
  SandboxIdParams,
  SandboxStatus,
  SetTimeoutBody,
} from "../schemas.js";

/** Lifecycle routes of the contract (§3.1, §3.6). */
export function sandboxRoutes(app: FastifyInstance, ctx: EngineContext): void {
  const { sandboxes } = ctx;

  // POST /v1/sandboxes – create and boot a sandbox (Idempotency-Key honoured)
  app.post("/sandboxes", async (req, reply) => {
    const body = parse(CreateSandboxBody, req.body, "body");
    return ctx.idempotency.run(req, reply, "POST /v1/sandboxes", async () => {
      const { view, status } = await sandboxes.create(accountOf(req), body);
      return { status, body: view };
    });
  });

  // GET /v1/sandboxes – newest first; ?status=&metadata[k]=v&template=&region=&limit=&cursor=
  app.get("/sandboxes", async (req, reply) => {
    const q = req.query as Record<string, string | string[] | undefined>;
    const { limit, cursor } = parse(ListQuery, { limit: first(q.limit), cursor: first(q.cursor) }, "query");
    const statuses = [q.status ?? []]
      .flat()
      .flatMap((s) => s.split(","))
      .map((s) => s.trim())
      .filter(Boolean);
    for (const s of statuses) parse(SandboxStatus, s, "query");
    const metadata: Record<string, string> = {};
    for (const [k, v] of Object.entries(q)) {
      const m = k.match(/^metadata\[(.+)\]$/);
      if (m && v !== undefined) metadata[m[1]!] = String(first(v));
    }
    const { items, next } = sandboxes.list(accountOf(req), {
      statuses,
      metadata,
      template: first(q.template),
      region: first(q.region),
      limit,
      cursor,
    });
    if (next) reply.header("X-Next-Cursor", next);
    return items;
  });

  // GET /v1/sandboxes/{id} – one sandbox
  app.get("/sandboxes/:id", async (req) =>
    sandboxes.get(accountOf(req), parse(SandboxIdParams, req.params, "path").id),
  );

  // PATCH /v1/sandboxes/{id} – metadata, countdown, auto_resume, on_timeout
  app.patch("/sandboxes/:id", async (req) => {
    const { id } = parse(SandboxIdParams, req.params, "path");
    return sandboxes.patch(accountOf(req), id, parse(PatchSandboxBody, req.body, "body"));
  });

  // DELETE /v1/sandboxes/{id} – terminate (idempotent)
  app.delete("/sandboxes/:id", async (req, reply) => {
    await sandboxes.terminate(accountOf(req), parse(SandboxIdParams, req.params, "path").id);
    return reply.status(204).send();
  });

  // POST /v1/sandboxes/{id}/pause – freeze every process, stop the meter
  app.post("/sandboxes/:id/pause", async (req) =>
    sandboxes.pause(accountOf(req), parse(SandboxIdParams, req.params, "path").id),
  );

  // POST /v1/sandboxes/{id}/resume – thaw, restart the countdown
  app.post("/sandboxes/:id/resume", async (req) => {
    const { id } = parse(SandboxIdParams, req.params, "path");
    return sandboxes.resume(accountOf(req), id, parse(ResumeBody, req.body, "body").timeout_seconds);
  });

  // POST /v1/sandboxes/{id}/timeout – set_timeout: expires_at = now + timeout_seconds
  app.post("/sandboxes/:id/timeout", async (req) => {
    const { id } = parse(SandboxIdParams, req.params, "path");
    const v = await sandboxes.setTimeout(accountOf(req), id, parse(SetTimeoutBody, req.body, "body").timeout_seconds);
    return { id: v.id, timeout_seconds: v.timeout_seconds, expires_at: v.expires_at };
  });

  // GET /v1/sandboxes/limits (alias /v1/limits) – the plan, its caps and what this machine enforces
  const limits = async (req: FastifyRequest) => {
    const plan = sandboxes.plan;
    const account = accountOf(req);
    // The machine's clamp (services/admission.ts): paused sandboxes and builds hold RAM too.
    const host = sandboxes.admission?.capacity();
    const ramUsed = sandboxes.liveMemoryMb(account);
    return {
      plan: plan.name,
      // Whose limits these are: every figure below counts this account's resources only.
      account: req.token!.account,
      allowed_sizes: plan.allowedSizes,
      // How many 1 GiB sandboxes can run at once: the plan's budget, clamped by the machine.
      max_concurrent: host ? maxConcurrent(plan.ramBudgetMb, host, PIDS_MAX) : Math.floor(plan.ramBudgetMb / 1024),
      // The plan's budget for live sandboxes (contract meaning), and what of it this machine can hold now.
      ram_budget_mb: plan.ramBudgetMb,
      effective_ram_budget_mb: host ? effectiveRamBudgetMb(plan.ramBudgetMb, ramUsed, host) : plan.ramBudgetMb,
      ram_used_mb: ramUsed,
      host_capacity: host ?? null,
      trial_credit_eur: plan.trialCreditEur,
      trial_credit_used_eur: Math.round(sandboxes.creditUsedEur(account) * 1e6) / 1e6,
      sizes: (["small", "medium", "large"] as const).map((size) => ({
        size,
        ...SIZES[size],
        allowed: plan.allowedSizes.includes(size),
      })),
      regions: REGIONS,
      default_egress_domains: DEFAULT_EGRESS_DOMAINS,
      max_named_snapshots: plan.maxNamedSnapshots,
      running: sandboxes.runningCount(account),
      paused: sandboxes.pausedCount(account),
      max_paused: plan.maxPaused,
      max_timeout_seconds: plan.maxTimeoutSeconds,
      max_running_seconds: plan.maxRunningSeconds,
      network_open_allowed: plan.networkOpenAllowed && !!ctx.host.isolation.network.open,
      previews_allowed: plan.previewsAllowed,
      max_volumes: plan.maxVolumes,
      max_volume_gb: plan.maxVolumeGb,
      // How many named snapshots and volumes are held now, and what this machine enforces for them.
      ...ctx.storage.limits(account),
      max_templates: plan.maxTemplates,
      templates: ctx.templates.count(account),
      sample_interval_seconds: ctx.config.sampleMs / 1000,
      capabilities: {
        exec_stream: ["sse", "ndjson"],
        pty: { transport: "websocket", path: "/v1/sandboxes/{id}/pty", resize: true, signals: true },
        presigned_files: true,
        events_follow: true,
        fault_injection: true,
      },
      engine: { name: "baton-engine", kind: "local" },
      isolation: ctx.host.isolation,
    };
  };
  app.get("/sandboxes/limits", limits);
  app.get("/limits", limits);
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
