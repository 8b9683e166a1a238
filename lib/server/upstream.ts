import "server-only";
import type { OrkestrClient } from "../orkestr/core.js";
import { passthrough } from "../orkestr/stream.js";
import type { Page } from "../orkestr/schemas/common.js";
import { orkestrFor } from "./tokens.js";

// The proxy core (issue 4 item 6): Baton's /api/v1/** routes call the user's own orkestr API with
// the token from the vault (orkestrFor) and answer with what it said. Errors are not caught here:
// an OrkestrError keeps its upstream status, code, detail and Retry-After through route()'s error
// mapping (lib/server/errors.ts); a missing connection is VaultError no_connection (409).
//
// Per-resource authorization: tokens are per user, so a user reaches only the sandboxes their own
// active connection's token can see. An id that belongs to someone else's connection is unknown to
// that upstream, and its 404 (sandbox_not_found) is passed through as is.
//
// Route files using proxyStream must run on Node (`export const runtime = "nodejs"`): the
// upstream body is a Node fetch stream handed to the Response without reading it.

/** The proxy does not retry on the browser's behalf: 503 fleet_full goes back at once with Retry-After. */
const PROXY_CLIENT = { maxRetries: 0 } as const;

/** The user's orkestr client (active connection) for a proxy route. */
export function upstreamFor(userId: string): Promise<OrkestrClient> {
  return orkestrFor(userId, { client: PROXY_CLIENT });
}

/** Calls the user's orkestr API and answers its (zod-parsed) JSON result; 204 for undefined. */
export async function proxyJson<T>(user: { id: string }, fn: (orkestr: OrkestrClient) => Promise<T>, init: { status?: number } = {}): Promise<Response> {
  const result = await fn(await upstreamFor(user.id));
  if (result === undefined) return new Response(null, { status: 204 });
  return Response.json(result, { status: init.status ?? 200 });
}

/** A list page as the contract has it: a bare JSON array, the next page's cursor in X-Next-Cursor. */
export async function proxyPage<T>(user: { id: string }, fn: (orkestr: OrkestrClient) => Promise<Page<T>>): Promise<Response> {
  const page = await fn(await upstreamFor(user.id));
  const headers = new Headers();
  if (page.nextCursor) headers.set("x-next-cursor", page.nextCursor);
  return Response.json(page.items, { headers });
}

/**
 * The upstream's streaming Response passed through unbuffered: `new Response(upstream.body, …)` with
 * its status, Content-Type, Retry-After and X-Next-Cursor, plus Cache-Control: no-cache and
 * X-Accel-Buffering: no so no proxy in between holds the chunks back.
 */
export function proxyStream(upstream: Response): Response {
  return passthrough(upstream);
}
