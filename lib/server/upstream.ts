import "server-only";
import type { OrkestrClient } from "../orkestr/core";
import { OrkestrError } from "../orkestr/errors";
import { passthrough } from "../orkestr/stream";
import type { Page } from "../orkestr/schemas/common";
import { AppError } from "./errors";
import { jsonResponse } from "./json-response";
import { activeConnection, rememberedOrkestrFor } from "./tokens";

// The proxy core (issue 4 item 6): Baton's /api/v1/** routes call the user's own orkestr API with
// the token from the vault (orkestrFor) and answer with what it said. Every call goes through
// withUpstream(), the one place upstream errors are looked at:
// - an OrkestrError keeps its upstream status, code, detail and Retry-After through route()'s error
//   mapping (lib/server/errors.ts), 501 not_implemented included;
// - except when the upstream refuses the connection's token (401, or 403 insufficient_scope): passed
//   through as is, the browser would read a 401 as "your Baton session ended". That becomes 409
//   connection_token_rejected naming the connection and where to replace its token;
// - a missing connection is VaultError no_connection (409).
//
// Per-resource authorization: tokens are per user, so a user reaches only the sandboxes their own
// active connection's token can see. An id that belongs to someone else's connection is unknown to
// that upstream, and its 404 (sandbox_not_found) is passed through as is.
//
// Route files using proxyStream must run on Node (`export const runtime = "nodejs"`): the
// upstream body is a Node fetch stream handed to the Response without reading it.

/** The proxy does not retry on the browser's behalf: 503 fleet_full goes back at once with Retry-After. */
const PROXY_CLIENT = { maxRetries: 0 } as const;

/** The upstream refused the token itself (not the request): missing, revoked or unknown (401), or lacking a scope. */
function isTokenRefusal(err: unknown): err is OrkestrError {
  return (
    err instanceof OrkestrError && (err.status === 401 || (err.status === 403 && err.code === "insufficient_scope"))
  );
}

async function tokenRejected(userId: string, err: OrkestrError): Promise<AppError> {
  const connection = await activeConnection(userId).catch(() => null);
  const which = connection
    ? `connection "${connection.name}" (token ${connection.tokenHint})`
    : "your active orkestr connection";
  const why =
    err.status === 401
      ? "was refused by its orkestr API: the token was revoked, has expired or is not known there"
      : `does not allow this (orkestr says: "${err.detail.replace(/[.\s]+$/, "")}")`;
  return new AppError(
    "connection_token_rejected",
    `The API token of the ${which} ${why}. Replace the token in Settings → Connections.`,
    { cause: err },
  );
}

/**
 * Runs `fn` with the user's orkestr client (active connection). Upstream errors are thrown on for
 * route() to map, a refused token as AppError connection_token_rejected (see above).
 */
export async function withUpstream<T>(user: { id: string }, fn: (orkestr: OrkestrClient) => Promise<T>): Promise<T> {
  const orkestr = await rememberedOrkestrFor(user.id, PROXY_CLIENT);
  try {
    return await fn(orkestr);
  } catch (err) {
    if (isTokenRefusal(err)) throw await tokenRejected(user.id, err);
    throw err;
  }
}

/**
 * The browser's `Idempotency-Key` on a creating POST, passed on: without it the server-side client
 * makes up a key per call, and a browser retry of a create that timed out would create twice. The
 * upstream scopes keys per token, and tokens are per user, so users cannot collide.
 */
export function idempotencyFrom(req: Request): { idempotencyKey?: string } {
  const key = req.headers.get("idempotency-key");
  return key && /^[\x21-\x7e]{1,255}$/.test(key) ? { idempotencyKey: key } : {};
}

/** Calls the user's orkestr API and answers its (zod-parsed) JSON result; 204 for undefined. */
export async function proxyJson<T>(
  user: { id: string },
  fn: (orkestr: OrkestrClient) => Promise<T>,
  init: { status?: number } = {},
): Promise<Response> {
  const result = await withUpstream(user, fn);
  if (result === undefined) return new Response(null, { status: 204 });
  return jsonResponse(result, { status: init.status ?? 200 });
}

/** A list page as the contract has it: a bare JSON array, the next page's cursor in X-Next-Cursor. */
export async function proxyPage<T>(
  user: { id: string },
  fn: (orkestr: OrkestrClient) => Promise<Page<T>>,
): Promise<Response> {
  const page = await withUpstream(user, fn);
  const headers = new Headers();
  if (page.nextCursor) headers.set("x-next-cursor", page.nextCursor);
  return jsonResponse(page.items, { headers });
}

/**
 * The upstream's streaming Response (a `…raw()` client method) passed through unbuffered:
 * `new Response(upstream.body, …)` with its status, Content-Type, Retry-After and X-Next-Cursor,
 * plus Cache-Control: no-cache and X-Accel-Buffering: no so no proxy in between holds the chunks
 * back. `headers` are set last (they win over the upstream's).
 */
export async function proxyStream(
  user: { id: string },
  fn: (orkestr: OrkestrClient) => Promise<Response>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return passthrough(await withUpstream(user, fn), headers);
}
