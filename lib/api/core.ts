import {
  codeForStatus,
  type FailedAnswer,
  OrkestrAbortError,
  OrkestrConnectionError,
  OrkestrError,
  OrkestrParseError,
  parseRetryAfter,
  readableDetail,
} from "../orkestr/errors";
import { extractList, cursorOf, paginate } from "../orkestr/pagination";
import { buildQuery, type Query } from "../orkestr/path";
import type { Page } from "../orkestr/schemas/common";
import type { Reader } from "./read";
import { readTeamParam, TEAM_HEADER, withTeam } from "../team-param";

/**
 * The browser's one client for Baton's own `/api` (never orkestr): every call a page makes goes
 * through `apiJson`, `apiVoid`, `apiPage`, `apiAll` here or `apiStream` (./stream.ts, apart so that
 * only the terminal loads the stream parser). It reads the wire with lib/orkestr's own pieces (the
 * `path` tag and query builder, list and cursor reading, the SSE/NDJSON parser, the error classes,
 * Retry-After and code-for-status), so the browser reads lists, streams and errors as the server does.
 *
 * It is not lib/orkestr's OrkestrCore pointed at /api: that one parses with zod, and zod (even
 * jitless; zod/mini needs schemas written twice) costs more than the pages' first-load budget
 * leaves. Baton's route handlers already parse every upstream answer with those zod schemas, so
 * what reaches the browser is normalised: here each answer is checked by a small Reader (lib/api/read.ts)
 * for the fields the UI relies on. No retries either: TanStack Query retries reads, and a
 * mutation the user clicked is not repeated behind their back.
 */

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export interface ApiRequest {
  method?: Method;
  /** Built with the `path` tag: path`/api/v1/sandboxes/${id}`. */
  path: string;
  query?: Query;
  /** Sent as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** How the browser's errors name the server that answered (or did not). */
export const SERVER = "The Baton server";
export const BASE = "the Baton server";

/**
 * The team this browser tab works in: its page URL's `?team=<slug>` (lib/team-param.ts), or null
 * outside a browser or on a page without one. Read at each call, so each tab uses its own team and
 * a team switch (a navigation) takes effect for the very next request.
 */
export function pageTeam(): string | null {
  return typeof window === "undefined" ? null : readTeamParam(window.location.search);
}

/**
 * `url` (a same-origin path) with the tab's team as `?team=`: for the requests that cannot carry
 * the X-Baton-Team header (EventSource, WebSocket).
 */
export function withPageTeam(url: string): string {
  return withTeam(url, pageTeam());
}

function urlOf(req: ApiRequest): string {
  return `${req.path}${buildQuery(req.query)}`;
}

/** The successful Response, body unread; anything else becomes an OrkestrError with the server's `{detail, code}`. */
export async function apiSend(req: ApiRequest, accept = "application/json"): Promise<Response> {
  const method = req.method ?? "GET";
  const url = urlOf(req);
  const team = pageTeam();
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: {
        accept,
        // Every call acts in the tab's team (lib/server/acting-team.ts checks membership).
        ...(team ? { [TEAM_HEADER]: team } : {}),
        ...(req.body === undefined ? {} : { "content-type": "application/json" }),
        ...req.headers,
      },
      body: req.body === undefined ? undefined : JSON.stringify(req.body),
      credentials: "same-origin",
      signal: req.signal,
    });
  } catch (cause) {
    if (req.signal?.aborted) throw new OrkestrAbortError({ method, url, cause });
    throw unreachable({ method, url, cause });
  }
  if (response.ok) return response;
  let text = "";
  try {
    text = await response.text();
  } catch {
    // The status says enough.
  }
  throw apiError({
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
    text,
    method,
    url,
  });
}

/**
 * The error for a failed answer of Baton's API: its `{ detail, code }` (plus `field`, `errors`,
 * `retry_after_seconds`, kept in `body`) as the shared OrkestrError, or, for an answer that is not
 * Baton's JSON (a proxy's HTML page), one sentence with the status. Baton's route wrapper already
 * turned any upstream error into that shape, so the orkestr-specific reading (errorFromResponse,
 * with its hints about tokens and URLs) stays on the server. Also used by the Files tab's upload,
 * the one call that needs XMLHttpRequest (for progress events) instead of fetch.
 */
export function apiError(answer: FailedAnswer): OrkestrError {
  let body: { detail?: unknown; code?: unknown; retry_after_seconds?: unknown } | null = null;
  try {
    const parsed: unknown = JSON.parse(answer.text);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) body = parsed;
  } catch {
    // Not JSON: described by its status below.
  }
  const status = `${answer.status}${answer.statusText ? ` ${answer.statusText}` : ""}`;
  return new OrkestrError({
    status: answer.status,
    code: typeof body?.code === "string" && body.code ? body.code : codeForStatus(answer.status),
    detail:
      readableDetail(body?.detail) ||
      `${SERVER} answered ${status}.${answer.status >= 500 ? " Try again in a moment." : ""}`,
    raw: body?.detail,
    body,
    retryAfterSeconds:
      parseRetryAfter(answer.headers) ??
      (typeof body?.retry_after_seconds === "number" ? body.retry_after_seconds : null),
    headers: answer.headers,
    method: answer.method,
    url: answer.url,
  });
}

/** No answer at all: the network, or the Baton server, is down. */
export function unreachable(init: { method?: string; url?: string; cause?: unknown; detail?: string } = {}) {
  return new OrkestrConnectionError({
    baseUrl: BASE,
    detail: "Could not reach the Baton server. Check your connection and try again.",
    ...init,
  });
}

export function unreadable(req: ApiRequest, status: number, problem: string, excerpt: string, cause?: unknown) {
  return new OrkestrParseError({
    baseUrl: BASE,
    server: SERVER,
    upstreamStatus: status,
    problem,
    excerpt: excerpt.slice(0, 500),
    method: req.method ?? "GET",
    url: urlOf(req),
    cause,
  });
}

async function body(req: ApiRequest, response: Response): Promise<unknown> {
  const text = await response.text();
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw unreadable(req, response.status, "the answer is not JSON", text, e);
  }
}

function check<T>(req: ApiRequest, status: number, value: unknown, read: Reader<T>): T {
  try {
    return read(value);
  } catch (e) {
    throw unreadable(req, status, e instanceof Error ? e.message : String(e), JSON.stringify(value) ?? "", e);
  }
}

/** The answer's JSON, checked by `read` (an empty body reads as undefined). */
export async function apiJson<T>(req: ApiRequest, read: Reader<T>): Promise<T> {
  const response = await apiSend(req);
  return check(req, response.status, await body(req, response), read);
}

/** A call whose answer carries nothing the caller needs (204, or a body that is ignored). */
export async function apiVoid(req: ApiRequest): Promise<void> {
  const response = await apiSend(req);
  await response.body?.cancel().catch(() => undefined);
}

/**
 * One page of a list route: the items (a bare array or `{items|data|…}`, as lib/orkestr/pagination.ts
 * reads lists), each checked by `readItem`, and the next cursor from `X-Next-Cursor` or the body.
 */
export async function apiPage<T>(req: ApiRequest, readItem: Reader<T>): Promise<Page<T>> {
  const response = await apiSend(req);
  const value = await body(req, response);
  const list = extractList(value);
  if (!list) throw unreadable(req, response.status, "expected a list", JSON.stringify(value) ?? "");
  return {
    items: list.items.map((item, i) => check(req, response.status, item, (v) => readItemAt(readItem, v, i))),
    nextCursor: cursorOf(response.headers.get("x-next-cursor")) ?? list.cursor,
  };
}

function readItemAt<T>(readItem: Reader<T>, value: unknown, index: number): T {
  try {
    return readItem(value);
  } catch (e) {
    throw new Error(`item ${index}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * Every item of a list route, page after page (`limit` per page, at most `maxPages`), with
 * lib/orkestr's paginate (which also stops when a server repeats a cursor).
 */
export async function apiAll<T>(
  req: ApiRequest,
  readItem: Reader<T>,
  { limit = 100, maxPages = 10 }: { limit?: number; maxPages?: number } = {},
): Promise<T[]> {
  const items: T[] = [];
  const fetchPage = (cursor: string | undefined) =>
    apiPage({ ...req, query: { ...req.query, limit, cursor } }, readItem);
  for await (const item of paginate(fetchPage, undefined, maxPages)) items.push(item);
  return items;
}
