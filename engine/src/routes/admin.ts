import type { FastifyInstance, FastifyRequest } from "fastify";
import { timingSafeEqual } from "node:crypto";
import { z } from "zod";
import type { EngineContext } from "../context.js";
import { ApiError } from "../errors.js";
import { parse } from "../lib/validate.js";
import { FaultRule } from "../services/faults.js";
import { mintToken, SCOPES } from "../store/tokens.js";

const MintBody = z.object({
  scopes: z.array(z.enum(SCOPES)).min(1).default(["sandboxes:read", "sandboxes:write"]),
  label: z.string().max(200).optional(),
});

function isLoopback(addr: string | undefined): boolean {
  return !!addr && (addr === "::1" || addr.startsWith("127.") || addr.startsWith("::ffff:127."));
}

/**
 * Loopback-only admin routes, guarded by the bootstrap secret in the data dir: the console's
 * "use the local engine" button mints a token here; tests inject faults here.
 */
export function adminRoutes(app: FastifyInstance, ctx: EngineContext): void {
  // The bootstrap secret (checked by the hook below, which runs for this plugin's routes only)
  // stands in for a Bearer token: the app-wide auth hook lets them through to it.
  app.addHook("onRoute", (route) => {
    route.config = { ...route.config, auth: "bootstrap" };
  });
  app.addHook("onRequest", async (req: FastifyRequest) => {
    if (!isLoopback(req.socket.remoteAddress)) throw new ApiError("forbidden", "Admin routes answer on loopback only");
    const given = Buffer.from(String(req.headers["x-baton-bootstrap"] ?? ""));
    const want = Buffer.from(ctx.bootstrapSecret);
    if (given.length !== want.length || !timingSafeEqual(given, want)) {
      throw new ApiError("unauthorized", "Send the engine's bootstrap secret (data/engine/bootstrap.secret) as X-Baton-Bootstrap");
    }
  });

  // POST /_admin/tokens – mint an ork_ token (shown once)
  app.post("/tokens", async (req, reply) => {
    const body = parse(MintBody, req.body, "body");
    const { token, record } = mintToken(ctx.db, body.scopes, body.label);
    return reply.status(201).send({ token, id: record.id, scopes: record.scopes, hint: record.hint });
  });

  // GET /_admin/faults – active fault rules
  app.get("/faults", async () => ctx.faults.list());

  // POST /_admin/faults – inject latency, 5xx, resets or 503 fleet_full on matching routes
  app.post("/faults", async (req, reply) => {
    const rule = parse(FaultRule, req.body, "body");
    try {
      const { regex: _r, ...f } = ctx.faults.add(rule);
      return reply.status(201).send(f);
    } catch (e) {
      throw new ApiError("validation_error", [{ loc: ["body", "path"], msg: (e as Error).message, type: "value_error" }]);
    }
  });

  // DELETE /_admin/faults[/{id}] – remove one rule or all
  app.delete("/faults", async (_req, reply) => {
    ctx.faults.remove();
    return reply.status(204).send();
  });
  app.delete("/faults/:id", async (req, reply) => {
    ctx.faults.remove((req.params as { id: string }).id);
    return reply.status(204).send();
  });
}
