import "server-only";
import type { OrkestrClient } from "../orkestr/core";
import { OrkestrError } from "../orkestr/errors";
import { passthrough } from "../orkestr/stream";
import type { Page } from "../orkestr/schemas/common";
import { endWhenAccessLost, type AccessLoss } from "./access-watch";
import type { ActingTeam } from "./acting-team";
import type { Connection } from "./db/connections";
import { noteConnectionUsed } from "./audit/first-use";
import { AppError } from "./errors";
import { jsonResponse } from "./json-response";
import { rememberedOrkestrFor, VaultError } from "./tokens";

// The proxy core (issue 4 item 6): Baton's /api/v1/** routes call the user's own orkestr API with
// the token from the vault (orkestrFor) and answer with what it said. The connection is the one of
// the team the request acts in (route()'s `team`, lib/server/acting-team.ts): the same team whose
// role route() checked, never the user's active connection on its own. Every call goes through
// withUpstream(), the one place upstream errors are looked at:
// - an OrkestrError keeps its upstream status, code, detail and Retry-After through route()'s error
//   mapping (lib/server/errors.ts), 501 not_implemented included;
// - except when the upstream refuses the connection's token (401, or 403 insufficient_scope): passed
//   through as is, the browser would read a 401 as "your Baton session ended". That becomes 409
//   connection_token_rejected naming the connection and where to replace its token;
// - a missing connection is VaultError no_connection (409), saying why (e.g. the active connection
//   belongs to another team).
//
// Per-resource authorization: tokens are per user, so a user reaches only the sandboxes their own
// connection's token can see. An id that belongs to someone else's connection is unknown to
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

function tokenRejected(connection: Connection, err: OrkestrError): AppError {
  const which = `connection "${connection.name}" (token ${connection.tokenHint})`;
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

/** The connection of the acting team, or why there is none (403 without a team, 409 without a connection). */
export function upstreamConnection(team: ActingTeam | null): Connection {
  if (!team) throw new AppError("forbidden", "You are not a member of a team, so Baton has no connection to use.");
  if (!team.connection) throw new VaultError("no_connection", team.noConnection ?? "You have no orkestr connection.");
  return team.connection;
}

/**
 * Runs `fn` with the orkestr client of the acting team's connection (route()'s `team`). Upstream
 * errors are thrown on for route() to map, a refused token as AppError connection_token_rejected
 * (see above).
 */
export async function withUpstream<T>(team: ActingTeam | null, fn: (orkestr: OrkestrClient) => Promise<T>): Promise<T> {
  const connection = upstreamConnection(team);
  const orkestr = await rememberedOrkestrFor(team!.userId, connection.id, PROXY_CLIENT);
  try {
    const result = await fn(orkestr);
    await noteConnectionUsed(team!);
    return result;
  } catch (err) {
    if (isTokenRefusal(err)) throw tokenRejected(connection, err);
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
  team: ActingTeam | null,
  fn: (orkestr: OrkestrClient) => Promise<T>,
  init: { status?: number } = {},
): Promise<Response> {
  const result = await withUpstream(team, fn);
  if (result === undefined) return new Response(null, { status: 204 });
  return jsonResponse(result, { status: init.status ?? 200 });
}

/** A list page as the contract has it: a bare JSON array, the next page's cursor in X-Next-Cursor. */
export async function proxyPage<T>(
  team: ActingTeam | null,
  fn: (orkestr: OrkestrClient) => Promise<Page<T>>,
): Promise<Response> {
  const page = await withUpstream(team, fn);
  const headers = new Headers();
  if (page.nextCursor) headers.set("x-next-cursor", page.nextCursor);
  return jsonResponse(page.items, { headers });
}

/**
 * The upstream's streaming Response (a `…raw()` client method) passed through unbuffered:
 * `new Response(upstream.body, …)` with its status, Content-Type, Retry-After and X-Next-Cursor,
 * plus Cache-Control: no-cache and X-Accel-Buffering: no so no proxy in between holds the chunks
 * back. `headers` are set last (they win over the upstream's).
 *
 * The stream ends when what allowed it is gone (`recheck`, route()'s: the session, the membership,
 * the role, the connection), asked every few seconds: a sign-out everywhere, a removal from the
 * team or a revoked connection stops an event feed or a command's output, not only the next call.
 */
export async function proxyStream(
  team: ActingTeam | null,
  fn: (orkestr: OrkestrClient) => Promise<Response>,
  opts: { recheck: () => Promise<AccessLoss | null>; headers?: Record<string, string> },
): Promise<Response> {
  const upstream = await withUpstream(team, fn);
  const watched = upstream.body
    ? new Response(endWhenAccessLost(upstream.body, opts.recheck), {
        status: upstream.status,
        statusText: upstream.statusText,
        headers: upstream.headers,
      })
    : upstream;
  return passthrough(watched, opts.headers ?? {});
}
