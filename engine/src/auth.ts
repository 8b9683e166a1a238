import type { FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "./errors.js";
import type { Db } from "./store/db.js";
import { verifyToken, type Scope, type TokenRecord, type TokenRejection } from "./store/tokens.js";

declare module "fastify" {
  interface FastifyRequest {
    token?: TokenRecord;
  }
}

/** Reads need sandboxes:read; anything that changes state needs sandboxes:write (contract §3.0). */
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

/** onRequest hook for /v1: every route is authenticated here, except presigned raw-file URLs. */
export function authHook(db: Db) {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const url = request.url;
    if (!url.startsWith("/v1/")) return;
    if (/^\/v1\/sandboxes\/[^/]+\/files\/raw\?/.test(url) && /[?&]sig=/.test(url) && !request.headers.authorization) return;
    const record = authenticate(db, request);
    requireScope(record, requiredScope(request.method));
    request.token = record;
  };
}
