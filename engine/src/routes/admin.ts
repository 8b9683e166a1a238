import type { FastifyRequest } from "fastify";
import { timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { ApiError } from "../errors.js";
import { FaultRule } from "../services/faults.js";
import { iso, isoOrNull } from "../lib/time.js";
import { DEFAULT_ACCOUNT_NAME } from "../store/db.js";
import {
  ACCOUNT_NAME,
  listAccounts,
  listTokens,
  mintToken,
  revokeToken,
  SCOPES,
  type TokenInfo,
} from "../store/tokens.js";
import type { ResourcePlugin } from "./plugin.js";

const MintBody = z.object({
  scopes: z.array(z.enum(SCOPES)).min(1).default(["sandboxes:read", "sandboxes:write"]),
  label: z.string().max(200).optional(),
  /** The account the token acts for, made on first use (the console uses one per Baton team). */
  account: z
    .string()
    .regex(ACCOUNT_NAME, "1-63 of a-z, 0-9, '.', '_', '-', starting with a letter or digit")
    .default(DEFAULT_ACCOUNT_NAME),
  /** Lifetime in seconds; without it the token lasts until it is revoked. */
  expires_in_seconds: z
    .number()
    .int()
    .min(1)
    .max(10 * 366 * 86_400)
    .optional(),
});
const TokenListQuery = z.object({ account: z.string().regex(ACCOUNT_NAME).optional() });
const TokenParams = z.object({ id: z.string().min(1).max(64) });

const tokenView = (t: TokenInfo) => ({
  id: t.id,
  account: t.account,
  scopes: t.scopes,
  hint: t.hint,
  label: t.label,
  created_at: iso(t.created_at),
  expires_at: isoOrNull(t.expires_at),
  revoked_at: isoOrNull(t.revoked_at),
});

function isLoopback(addr: string | undefined): boolean {
  return !!addr && (addr === "::1" || addr.startsWith("127.") || addr.startsWith("::ffff:127."));
}

/**
 * Loopback-only admin routes, guarded by the bootstrap secret in the data dir: the console's
 * "use the local engine" button mints a token here; tests inject faults here.
 */
export const adminRoutes: ResourcePlugin = async (app, { ctx }) => {
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
      throw new ApiError(
        "unauthorized",
        "Send the engine's bootstrap secret (data/engine/bootstrap.secret) as X-Baton-Bootstrap",
      );
    }
  });

  // POST /_admin/tokens – mint an ork_ token of an account (shown once)
  app.post("/tokens", { schema: { body: MintBody } }, async (req, reply) => {
    const body = req.body;
    const expiresAt = body.expires_in_seconds === undefined ? null : Date.now() + body.expires_in_seconds * 1000;
    const { token, record } = mintToken(ctx.db, body.scopes, { label: body.label, account: body.account, expiresAt });
    return reply.status(201).send({
      token,
      id: record.id,
      scopes: record.scopes,
      hint: record.hint,
      account: record.account,
      expires_at: isoOrNull(expiresAt),
    });
  });

  // GET /_admin/tokens?account= – every token (never its value), revoked and expired ones too
  app.get("/tokens", { schema: { querystring: TokenListQuery } }, async (req) =>
    listTokens(ctx.db, req.query).map(tokenView),
  );

  // DELETE /_admin/tokens/{id} – revoke: the next request with it is 401, and every stream it
  // holds open (SSE, exec streams, terminals) ends now
  app.delete("/tokens/:id", { schema: { params: TokenParams } }, async (req, reply) => {
    const { id } = req.params;
    if (!revokeToken(ctx.db, id)) throw new ApiError("not_found", `Token ${id} not found`);
    ctx.streams.revoked(id);
    return reply.status(204).send();
  });

  // GET /_admin/accounts – the engine's accounts with their live token counts
  app.get("/accounts", async () =>
    listAccounts(ctx.db).map((a) => ({ id: a.id, name: a.name, created_at: iso(a.created_at), tokens: a.tokens })),
  );

  // GET /_admin/routes – every route the engine serves (tests generate their matrices from it)
  app.get("/routes", async () => ctx.routes);

  // GET /_admin/faults – active fault rules
  app.get("/faults", async () => ctx.faults.list());

  // POST /_admin/faults – inject latency, 5xx, resets or 503 fleet_full on matching routes
  app.post("/faults", { schema: { body: FaultRule } }, async (req, reply) => {
    try {
      const { regex: _r, ...f } = ctx.faults.add(req.body);
      return reply.status(201).send(f);
    } catch (e) {
      throw new ApiError("validation_error", [
        { loc: ["body", "path"], msg: (e as Error).message, type: "value_error" },
      ]);
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
};
