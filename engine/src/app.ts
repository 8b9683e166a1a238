import Fastify, { type FastifyInstance } from "fastify";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { EngineConfig } from "./config.js";
import type { EngineContext } from "./context.js";
import { authHook, routedPath } from "./auth.js";
import { clientErrorHandler, frameworkErrorHandler, installErrorHandler, sendError, ApiError } from "./errors.js";
import { apiHostAllowed } from "./lib/api-host.js";
import { sleep } from "./lib/time.js";
import { prepareHost } from "./runtime/host.js";
import { EventLog } from "./services/events.js";
import { Faults } from "./services/faults.js";
import { Idempotency } from "./services/idempotency.js";
import { SandboxService, PIDS_MAX } from "./services/sandboxes.js";
import { describeCapacity, HostAdmission } from "./services/admission.js";
import { PreviewService } from "./services/previews.js";
import { previewServerFactory } from "./services/preview-proxy.js";
import { LiveSandboxes } from "./services/sandboxes/live.js";
import { planFor } from "./services/sandboxes/plan-admission.js";
import { SandboxStorage } from "./services/sandbox-storage.js";
import { SnapshotService } from "./services/snapshots.js";
import { openVolumeStore, VolumeService } from "./services/volumes.js";
import { TemplateService } from "./services/templates.js";
import { WebhookService } from "./services/webhooks.js";
import { getMeta, openDb, setMeta } from "./store/db.js";
import { adminRoutes } from "./routes/admin.js";
import { sandboxRoutes } from "./routes/sandboxes.js";
import { execRoutes } from "./routes/exec.js";
import { fileRoutes } from "./routes/files.js";
import { metricsRoutes } from "./routes/metrics.js";
import { eventRoutes } from "./routes/events.js";
import { catalogRoutes } from "./routes/catalog.js";
import { ptyRoutes } from "./routes/pty.js";
import { previewRoutes } from "./routes/previews.js";
import { webhookRoutes } from "./routes/webhooks.js";
import { usageRoutes } from "./routes/usage.js";
import { templateRoutes } from "./routes/templates.js";
import { snapshotRoutes } from "./routes/snapshots.js";
import { volumeRoutes } from "./routes/volumes.js";

/** JSON bodies up to this size are parsed; file routes enforce their own 10 MiB decoded cap. */
export const BODY_LIMIT = 40 * 1024 * 1024;

function loadSecret(file: string): string {
  try {
    return fs.readFileSync(file, "utf8").trim();
  } catch {
    const secret = randomBytes(32).toString("base64url");
    fs.writeFileSync(file, secret + "\n", { mode: 0o600 });
    return secret;
  }
}

export interface Engine {
  app: FastifyInstance;
  ctx: EngineContext;
  close(): Promise<void>;
}

export async function buildEngine(config: EngineConfig): Promise<Engine> {
  const log = (msg: string) => (config.logLevel === "silent" ? undefined : console.error(`[engine] ${msg}`));
  fs.mkdirSync(config.root, { recursive: true, mode: 0o711 });
  const db = openDb(config.root);
  const host = await prepareHost(config, log);
  const events = new EventLog(db);
  // Built in dependency order, each with what it needs. The pieces two services share are built
  // first: the live-sandbox registry and the volume store (host admission reads both).
  const plan = planFor(config);
  const live = new LiveSandboxes();
  const volumeStore = openVolumeStore(config, host);
  // The machine's own RAM, pids and disk, checked after every plan limit (services/admission.ts).
  const admission = new HostAdmission(
    config,
    db,
    {
      // pids.current only: admission runs on every create and resume, memory.stat is not needed there.
      sandboxThreads: (id) => live.process(id)?.cgroup.taskCount(),
      volumeData: (region, id) => ({
        path: volumeStore.store.dataPath(region, id),
        image: volumeStore.store.backend === "loop-ext4",
      }),
    },
    PIDS_MAX,
  );
  const templates = new TemplateService(config, db, host, events, admission);
  const volumes = new VolumeService(config, db, events, plan, volumeStore, admission);
  // Sandboxes of a custom template bind its layer; snapshots need running sandboxes, which fork them.
  const sandboxes = new SandboxService({
    config,
    db,
    host,
    events,
    plan,
    live,
    admission,
    templates,
    storage: (s) => new SandboxStorage(new SnapshotService(config, db, events, s, host.scratchTmpfs), volumes, db),
  });
  const { storage } = sandboxes;
  const failed = sandboxes.recoverAfterRestart();
  const webhooks = new WebhookService(config, db, events, sandboxes, log);
  if (failed) log(`${failed} sandbox(es) from an earlier run marked failed: their processes died with it`);
  // After the webhook service exists, so a build failed by the restart is announced like any other.
  const builds = templates.recoverAfterRestart();
  if (builds.failed) log(`${builds.failed} template build(s) interrupted by the restart marked failed`);
  // Named snapshots and volumes. Recovered after the sandboxes: every holder died with the last run.
  storage.snapshots.recover();
  await storage.volumes.recover();
  if (storage.volumes.backendNote)
    log(`  degraded: volumes are plain directories whose size is not enforced (${storage.volumes.backendNote})`);
  log(`  host capacity: ${describeCapacity(admission.capacity())}`);
  let signing = getMeta(db, "signing_key");
  if (!signing) {
    signing = randomBytes(32).toString("hex");
    setMeta(db, "signing_key", signing);
  }
  const previews = new PreviewService(config, db, sandboxes, events, Buffer.from(signing, "hex"));
  const ctx: EngineContext = {
    config,
    db,
    host,
    events,
    sandboxes,
    storage,
    templates,
    faults: new Faults(),
    idempotency: new Idempotency(db),
    previews,
    webhooks,
    usage: sandboxes.usage,
    signingKey: Buffer.from(signing, "hex"),
    bootstrapSecret: loadSecret(path.join(config.root, "bootstrap.secret")),
    routes: [],
  };

  const app = Fastify({
    logger: config.logLevel === "silent" ? false : { level: config.logLevel === "debug" ? "debug" : "warn" },
    bodyLimit: BODY_LIMIT,
    disableRequestLogging: true,
    return503OnClosing: true,
    forceCloseConnections: true,
    // The router's and Node's own refusals (over-long ids, bad percent-encoding, malformed HTTP)
    // in the contract's {detail, code} shape.
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    // Preview hosts (<port>-<id>.sbx.localhost) are proxied by the server itself, before any route or
    // hook; any other Host that is not one of the engine's own names is refused there (421).
    serverFactory: previewServerFactory(previews, (host) => apiHostAllowed(config, host)),
  });
  // ORKESTR_ENGINE_PORT=0 binds any free port: from here on config.port is the bound one, which preview URLs carry.
  app.addHook("onListen", async () => {
    const addr = app.server.address();
    if (addr && typeof addr === "object") config.port = addr.port;
  });
  // The route table, as registered: the tenancy matrix test walks every route from it.
  app.addHook("onRoute", (r) => {
    for (const method of [r.method].flat()) ctx.routes.push({ method, url: r.url });
  });
  installErrorHandler(app);
  // An empty body with a JSON content type is an empty object (pause, resume and friends take none).
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_req, body, done) => {
    const text = (body as string).trim();
    if (!text) return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (e) {
      done(new ApiError("bad_request", `Malformed JSON body: ${(e as Error).message}`), undefined);
    }
  });

  // Rules match the path the request was routed on, so "/%761/…" is the same route as "/v1/…".
  app.addHook("onRequest", async (request, reply) => {
    const routed = routedPath(request);
    if (!routed?.startsWith("/v1/")) return;
    const fault = ctx.faults.match(request.method, routed);
    if (!fault) return;
    if (fault.kind === "latency") return void (await sleep(fault.latency_ms));
    if (fault.kind === "reset") {
      reply.hijack();
      request.raw.socket.destroy();
      return;
    }
    if (fault.kind === "fleet_full") {
      return sendError(
        reply,
        new ApiError(
          "fleet_full",
          "The fleet is momentarily full (injected fault); retry after the given delay",
          { retry_after_seconds: fault.retry_after_seconds },
          { "Retry-After": String(fault.retry_after_seconds) },
        ),
      );
    }
    return reply.status(fault.status).send({ detail: `Injected ${fault.status} fault`, code: "fault_injected" });
  });
  // Every route, whatever plugin adds it and whenever, needs a token unless its config exempts it.
  app.addHook("onRequest", authHook(db));

  await app.register(
    async (v1) => {
      sandboxRoutes(v1, ctx);
      execRoutes(v1, ctx);
      fileRoutes(v1, ctx);
      metricsRoutes(v1, ctx);
      eventRoutes(v1, ctx);
      catalogRoutes(v1, ctx);
      ptyRoutes(v1, ctx);
      previewRoutes(v1, ctx);
      snapshotRoutes(v1, ctx);
      volumeRoutes(v1, ctx);
      webhookRoutes(v1, ctx);
      usageRoutes(v1, ctx);
      templateRoutes(v1, ctx);
    },
    { prefix: "/v1" },
  );
  await app.register(async (admin) => adminRoutes(admin, ctx), { prefix: "/_admin" });
  app.get("/healthz", { config: { auth: "public" } }, async () => ({ ok: true, isolation: host.isolation.mode }));

  sandboxes.startSampler();
  storage.volumes.startSweeper();
  templates.start();
  webhooks.start();
  return {
    app,
    ctx,
    async close() {
      await sandboxes.shutdown();
      // After the sandboxes (their volumes were unmounted as each was released): nothing stays mounted.
      await storage.volumes.close();
      // After the sandboxes (they hold the template views): stops a build, releases every overlay mount.
      await templates.shutdown();
      // After the sandboxes: their final events are queued (persisted) for the next run to send.
      await webhooks.close();
      await app.close();
      await host.close();
      db.close();
    },
  };
}
