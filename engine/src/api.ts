import swagger from "@fastify/swagger";
import Fastify, { type FastifyInstance } from "fastify";
import { firstQueryValues, type EngineTypeProvider } from "./routes/plugin.js";
import type { EngineContext } from "./context.js";
import { authHook, routedPath } from "./auth.js";
import { ApiError, clientErrorHandler, frameworkErrorHandler, installErrorHandler, sendError } from "./errors.js";
import { apiHostAllowed } from "./lib/api-host.js";
import { responseSerializer } from "./lib/serialize.js";
import { sleep } from "./lib/time.js";
import { validatorCompiler } from "./lib/validate.js";
import { OPENAPI_OPTIONS, openApiDocument } from "./openapi.js";
import { previewServerFactory } from "./services/preview-proxy.js";
import { adminRoutes } from "./routes/admin.js";
import { catalogRoutes } from "./routes/catalog.js";
import { eventRoutes } from "./routes/events.js";
import { execRoutes } from "./routes/exec.js";
import { fileRoutes } from "./routes/files.js";
import { metricsRoutes } from "./routes/metrics.js";
import { previewRoutes } from "./routes/previews.js";
import { ptyRoutes } from "./routes/pty.js";
import { sandboxRoutes } from "./routes/sandboxes.js";
import { snapshotRoutes } from "./routes/snapshots.js";
import { templateRoutes } from "./routes/templates.js";
import { usageRoutes } from "./routes/usage.js";
import { volumeRoutes } from "./routes/volumes.js";
import { webhookRoutes } from "./routes/webhooks.js";

/** The /v1 resources, in the order the OpenAPI document lists them. */
const V1_RESOURCES = [
  sandboxRoutes,
  execRoutes,
  fileRoutes,
  metricsRoutes,
  eventRoutes,
  catalogRoutes,
  ptyRoutes,
  previewRoutes,
  snapshotRoutes,
  volumeRoutes,
  webhookRoutes,
  usageRoutes,
  templateRoutes,
];

/** JSON bodies up to this size are parsed; file routes enforce their own 10 MiB decoded cap. */
export const BODY_LIMIT = 40 * 1024 * 1024;

/**
 * The engine's HTTP API over its services: the app-wide hooks (faults, authentication), one
 * encapsulated plugin per resource under /v1, the loopback admin plugin, and the OpenAPI document
 * generated from the routes' schemas. `checkResponses` validates every answer against its documented
 * schema (tests); otherwise answers are serialized without a check.
 */
export async function buildApi(ctx: EngineContext, opts: { checkResponses?: boolean } = {}): Promise<FastifyInstance> {
  const { config } = ctx;
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
    serverFactory: previewServerFactory(ctx.previews, (host) => apiHostAllowed(config, host)),
  }).withTypeProvider<EngineTypeProvider>();
  // Route schemas are zod: a request that fails one is the contract's 422 (lib/validate.ts).
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(responseSerializer(opts.checkResponses ?? false));
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
  app.addHook("onRequest", authHook(ctx.db));
  // After auth, before the route schemas validate the query: one rule for repeated query keys.
  app.addHook("preValidation", firstQueryValues);

  // Before the routes: it collects them as they are added.
  await app.register(swagger, OPENAPI_OPTIONS);

  await app.register(
    async (v1) => {
      // One encapsulated plugin per resource: its hooks and parsers stay inside it.
      for (const plugin of V1_RESOURCES) await v1.register(plugin, { ctx });
      // GET /v1/openapi.json – this API's OpenAPI 3.1 document. Behind a token like the rest of
      // /v1 (only presigned URLs pass without one): the same document is public in docs/openapi.json.
      v1.get("/openapi.json", { schema: { hide: true } }, async () => openApiDocument(app));
    },
    { prefix: "/v1" },
  );
  await app.register(adminRoutes, { prefix: "/_admin", ctx });
  app.get("/healthz", { config: { auth: "public" }, schema: { hide: true } }, async () => ({
    ok: true,
    isolation: ctx.host.isolation.mode,
  }));
  return app;
}
