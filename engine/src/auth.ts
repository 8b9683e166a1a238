import type { FastifyRequest } from "fastify";
import { ApiError } from "./errors.js";
import type { Db } from "./store/db.js";
import { verifyToken, type Scope, type TokenRecord, type TokenRejection } from "./store/tokens.js";

declare module "fastify" {
  interface FastifyRequest {
    token?: TokenRecord;
  }
  interface FastifyContextConfig {
    /**
     * How a route is let in without a Bearer token; unset (the default for every route, including
     * any added later) means a token with the method's scope. "presigned": a request that carries
     * `sig` and no Authorization header passes to the handler, which must verify the signature
     * (the raw-file route). "bootstrap": the route checks the bootstrap secret itself (/_admin).
     * "public": no credentials at all (/healthz). Only "presigned" is allowed under /v1.
     */
    auth?: "presigned" | "bootstrap" | "public";
    /** Query keys that may repeat on this route (arrays); any other repeated key keeps its first value. */
    repeatableQuery?: readonly string[];
  }
}

/** Reads need sandboxes:read; anything that changes state needs sandboxes:write (the contract's global rule for every /v1 route). */
export function requiredScope(method: string): Scope {
  return method === "GET" || method === "HEAD" ? "sandboxes:read" : "sandboxes:write";
}

export function authenticate(db: Db, request: FastifyRequest): TokenRecord {
  const header = request.headers.authorization;
  const m = header?.match(/^Bearer\s+(\S+)$/i);
  if (!m) throw new ApiError("unauthorized", "Not authenticated: send Authorization: Bearer ork_…");
  const record = verifyToken(db, m[1]!);
  if ("rejected" in record) throw new ApiError("unauthorized", REJECTED[record.rejected], { reason: record.rejected });
  return record;
}

const REJECTED: Record<TokenRejection, string> = {
  unknown: "Not authenticated: the token is unknown",
  revoked: "Not authenticated: the token was revoked; ask for a new one",
  expired: "Not authenticated: the token expired; ask for a new one",
};

/**
 * The account a request acts for: every service call is scoped by it. Throws (401) when the
 * request was not authenticated, so a route that somehow skipped authentication serves nothing.
 */
export function accountOf(request: FastifyRequest): string {
  const id = request.token?.account.id;
  if (!id) throw new ApiError("unauthorized", "Not authenticated: send Authorization: Bearer ork_…");
  return id;
}

export function requireScope(record: TokenRecord, scope: Scope): void {
  if (!record.scopes.includes(scope)) {
    throw new ApiError("insufficient_scope", `This token lacks the ${scope} scope`, { required_scope: scope });
  }
}

function isV1(url: string): boolean {
  return url === "/v1" || url.startsWith("/v1/");
}

/**
 * onRequest hook for every route: a Bearer token with the method's scope, unless the route's config
 * exempts it. It reads the route Fastify matched (after percent-decoding, absolute-form targets,
 * duplicate slashes and the query split), never the raw request target, which can spell one route
 * in many ways. Requests that match no route only reach the not-found handler.
 */
export function authHook(db: Db) {
  return async (request: FastifyRequest) => {
    if (request.is404) return;
    const { url = "", config } = request.routeOptions;
    const mode = config.auth;
    // Under /v1 nothing but a presigned URL skips the token, whatever a route's config says.
    if ((mode === "public" || mode === "bootstrap") && !isV1(url)) return;
    // The handler verifies the signature of such a request (it has no token to fall back on).
    if (
      mode === "presigned" &&
      (request.query as Record<string, unknown>).sig !== undefined &&
      !request.headers.authorization
    )
      return;
    const record = authenticate(db, request);
    requireScope(record, requiredScope(request.method));
    request.token = record;
  };
}

/**
 * The path a request was routed on: the matched route's pattern with its decoded parameters put
 * back (e.g. /v1/sandboxes/sbx_1/exec for "/%761/sandboxes/sbx_1/exec"), or null when no route
 * matched.
 */
export function routedPath(request: FastifyRequest): string | null {
  if (request.is404) return null;
  const url = request.routeOptions.url ?? "";
  const params = (request.params ?? {}) as Record<string, string | undefined>;
  return url.replace(/:([A-Za-z0-9_]+)|\*/g, (m, name?: string) => (name ? params[name] : params["*"]) ?? m);
}
