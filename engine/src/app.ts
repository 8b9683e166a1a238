import Fastify, { type FastifyInstance } from "fastify";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { EngineConfig } from "./config.js";
import type { EngineContext } from "./context.js";
import { authHook } from "./auth.js";
import { installErrorHandler, sendError, ApiError } from "./errors.js";
import { sleep } from "./lib/time.js";
import { prepareHost } from "./runtime/host.js";
import { EventLog } from "./services/events.js";
import { Faults } from "./services/faults.js";
import { Idempotency } from "./services/idempotency.js";
import { SandboxService } from "./services/sandboxes.js";
import { getMeta, openDb, setMeta } from "./store/db.js";
import { adminRoutes } from "./routes/admin.js";
import { sandboxRoutes } from "./routes/sandboxes.js";
import { execRoutes } from "./routes/exec.js";
import { fileRoutes } from "./routes/files.js";
import { metricsRoutes } from "./routes/metrics.js";
import { eventRoutes } from "./routes/events.js";
import { catalogRoutes } from "./routes/catalog.js";
import { ptyRoutes } from "./routes/pty.js";
import { notImplementedRoutes } from "./routes/not-implemented.js";

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
  const sandboxes = new SandboxService(config, db, host, events);
  const failed = sandboxes.recoverAfterRestart();
  if (failed) log(`${failed} sandbox(es) from an earlier run marked failed: their processes died with it`);
  let signing = getMeta(db, "signing_key");
  if (!signing) {
    signing = randomBytes(32).toString("hex");
    setMeta(db, "signing_key", signing);
  }
  const ctx: EngineContext = {
    config, db, host, events, sandboxes, faults: new Faults(), idempotency: new Idempotency(db),
    signingKey: Buffer.from(signing, "hex"),
    bootstrapSecret: loadSecret(path.join(config.root, "bootstrap.secret")),
  };

  const app = Fastify({
    logger: config.logLevel === "silent" ? false : { level: config.logLevel === "debug" ? "debug" : "warn" },
    bodyLimit: BODY_LIMIT,
    disableRequestLogging: true,
    return503OnClosing: true,
    forceCloseConnections: true,
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

  app.addHook("onRequest", async (request, reply) => {
    if (!request.url.startsWith("/v1/")) return;
    const fault = ctx.faults.match(request.method, request.url.split("?")[0]!);
    if (!fault) return;
    if (fault.kind === "latency") return void (await sleep(fault.latency_ms));
    if (fault.kind === "reset") {
      reply.hijack();
      request.raw.socket.destroy();
      return;
    }
    if (fault.kind === "fleet_full") {
      return sendError(reply, new ApiError("fleet_full", "The fleet is momentarily full (injected fault); retry after the given delay", { retry_after_seconds: fault.retry_after_seconds }, { "Retry-After": String(fault.retry_after_seconds) }));
    }
    return reply.status(fault.status).send({ detail: `Injected ${fault.status} fault`, code: "fault_injected" });
  });
  app.addHook("onRequest", authHook(db));

  await app.register(async (v1) => {
    sandboxRoutes(v1, ctx);
    execRoutes(v1, ctx);
    fileRoutes(v1, ctx);
    metricsRoutes(v1, ctx);
    eventRoutes(v1, ctx);
    catalogRoutes(v1, ctx);
    ptyRoutes(v1, ctx);
    notImplementedRoutes(v1);
  }, { prefix: "/v1" });
  await app.register(async (admin) => adminRoutes(admin, ctx), { prefix: "/_admin" });
  app.get("/healthz", async () => ({ ok: true, isolation: host.isolation.mode }));

  sandboxes.startSampler();
  return {
    app,
    ctx,
    async close() {
      await sandboxes.shutdown();
      await app.close();
      await host.close();
      db.close();
    },
  };
}
