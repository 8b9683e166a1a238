import type { FastifyRequest } from "fastify";
import { z } from "zod";
import { accountOf } from "../auth.js";
import { DEFAULT_EGRESS_DOMAINS, REGIONS } from "../plans.js";
import { effectiveRamBudgetMb, maxConcurrent } from "../services/admission.js";
import { PIDS_MAX } from "../services/sandboxes.js";
import { sizeReport } from "../services/size-report.js";
import {
  CreateSandboxBody,
  ListQuery,
  PatchSandboxBody,
  ResumeBody,
  SandboxIdParams,
  SandboxStatus,
  SetTimeoutBody,
} from "../schemas.js";
import { Limits, NoContent, Sandbox, TimeoutResult } from "../responses.js";
import { sendPage, type ResourcePlugin } from "./plugin.js";

const tags = ["sandboxes"];
const id = { params: SandboxIdParams };

/** ?status= is a comma list, or repeated; each one a sandbox status. */
const Statuses = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .transform((v) =>
    [v ?? []]
      .flat()
      .flatMap((s) => s.split(","))
      .map((s) => s.trim())
      .filter(Boolean),
  )
  .pipe(z.array(SandboxStatus));
const SandboxListQuery = ListQuery.extend({
  status: Statuses.describe("Comma list (or repeated) of statuses"),
  template: z.string().optional(),
  region: z.string().optional(),
  snapshot: z
    .string()
    .max(128)
    .optional()
    .describe("Only sandboxes forked from this named snapshot (id or name; a deleted snapshot's id still matches)"),
  // Documents the metadata filters; any metadata[<key>] is read (the catchall below keeps them).
  "metadata[key]": z.string().optional().describe("metadata[<key>]=<value>: only sandboxes with that metadata"),
}).catchall(z.string());

/** Lifecycle routes: create, list, get, patch, terminate, pause, resume, timeout, limits. */
export const sandboxRoutes: ResourcePlugin = async (app, { ctx }) => {
  const { sandboxes } = ctx;

  app.post(
    "/sandboxes",
    {
      schema: {
        tags,
        summary: "Create and boot a sandbox (Idempotency-Key honoured)",
        body: CreateSandboxBody,
        response: { 201: Sandbox, 202: Sandbox },
      },
    },
    async (req, reply) =>
      ctx.idempotency.run(req, reply, "POST /v1/sandboxes", async () => {
        const { view, status } = await sandboxes.create(accountOf(req), req.body);
        return { status, body: view };
      }),
  );

  app.get(
    "/sandboxes",
    {
      // ?status may repeat; any other key keeps its first value (the root hook in api.ts).
      config: { repeatableQuery: ["status"] },
      schema: {
        tags,
        summary: "List sandboxes, newest first",
        querystring: SandboxListQuery,
        response: { 200: z.array(Sandbox) },
      },
    },
    async (req, reply) => {
      const { limit, cursor, status, template, region, snapshot, ...rest } = req.query;
      const metadata: Record<string, string> = {};
      for (const [k, v] of Object.entries(rest)) {
        const m = k.match(/^metadata\[(.+)\]$/);
        if (m) metadata[m[1]!] = String(v);
      }
      const account = accountOf(req);
      // A name is resolved to the snapshot it names now; an id is matched as is, so the children
      // of a snapshot already deleted are still found by the id they carry.
      const snapshotId = snapshot ? (ctx.storage.snapshots.find(account, snapshot)?.id ?? snapshot) : undefined;
      return sendPage(
        reply,
        sandboxes.list(account, { statuses: status, metadata, template, region, snapshotId, limit, cursor }),
      );
    },
  );

  app.get(
    "/sandboxes/:id",
    { schema: { tags, summary: "One sandbox", ...id, response: { 200: Sandbox } } },
    async (req) => sandboxes.get(accountOf(req), req.params.id),
  );

  app.patch(
    "/sandboxes/:id",
    {
      schema: {
        tags,
        summary: "Change metadata, the countdown, auto_resume or on_timeout",
        ...id,
        body: PatchSandboxBody,
        response: { 200: Sandbox },
      },
    },
    async (req) => sandboxes.patch(accountOf(req), req.params.id, req.body),
  );

  app.delete(
    "/sandboxes/:id",
    { schema: { tags, summary: "Terminate (idempotent)", ...id, response: { 204: NoContent } } },
    async (req, reply) => {
      await sandboxes.terminate(accountOf(req), req.params.id);
      return reply.status(204).send();
    },
  );

  app.post(
    "/sandboxes/:id/pause",
    { schema: { tags, summary: "Freeze every process, stop the meter", ...id, response: { 200: Sandbox } } },
    async (req) => sandboxes.pause(accountOf(req), req.params.id),
  );

  app.post(
    "/sandboxes/:id/resume",
    {
      schema: {
        tags,
        summary: "Thaw and restart the countdown",
        ...id,
        body: ResumeBody,
        response: { 200: Sandbox },
      },
    },
    async (req) => sandboxes.resume(accountOf(req), req.params.id, req.body.timeout_seconds),
  );

  app.post(
    "/sandboxes/:id/timeout",
    {
      schema: {
        tags,
        summary: "set_timeout: expires_at = now + timeout_seconds",
        ...id,
        body: SetTimeoutBody,
        response: { 200: TimeoutResult },
      },
    },
    async (req) => {
      const v = await sandboxes.setTimeout(accountOf(req), req.params.id, req.body.timeout_seconds);
      return { id: v.id, timeout_seconds: v.timeout_seconds, expires_at: v.expires_at };
    },
  );

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
      // This machine's warm pool: booted sandboxes no account owns yet, counted in host_capacity
      // (pooled_sandboxes, memory_pooled_mb), never in this account's figures.
      warm_pool: sandboxes.pool.status(),
      trial_credit_eur: plan.trialCreditEur,
      trial_credit_used_eur: Math.round(sandboxes.creditUsedEur(account) * 1e6) / 1e6,
      // What happens when the credit is used up: a hard wall (402 trial_exhausted) or metered billing.
      trial_is_hard_limit: plan.trialIsHardLimit,
      sizes: sizeReport(plan, host),
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
  const limitsSchema = { schema: { tags: ["limits"], response: { 200: Limits } } };
  app.get(
    "/sandboxes/limits",
    { schema: { ...limitsSchema.schema, summary: "The plan, its caps and what this machine enforces" } },
    limits,
  );
  app.get("/limits", { schema: { ...limitsSchema.schema, summary: "Alias of GET /v1/sandboxes/limits" } }, limits);
};
