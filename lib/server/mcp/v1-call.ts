import "server-only";
import * as sandboxById from "../../../app/api/v1/sandboxes/[id]/route";
import * as exec from "../../../app/api/v1/sandboxes/[id]/exec/route";
import * as files from "../../../app/api/v1/sandboxes/[id]/files/route";
import * as pause from "../../../app/api/v1/sandboxes/[id]/pause/route";
import * as preview from "../../../app/api/v1/sandboxes/[id]/previews/[port]/route";
import * as resume from "../../../app/api/v1/sandboxes/[id]/resume/route";
import * as snapshots from "../../../app/api/v1/sandboxes/[id]/snapshots/route";
import * as limits from "../../../app/api/v1/limits/route";
import * as sandboxes from "../../../app/api/v1/sandboxes/route";
import * as usage from "../../../app/api/v1/usage/route";
import { markVia } from "../request-via";

// An MCP tool call is one call of Baton's own /api/v1 route handler, in process: the same route()
// (authentication by the MCP request's bearer token, the route × role matrix, tenancy, spend caps,
// audit) answers it, with no second HTTP hop. The handlers are imported, not looked up by path, so
// the set a tool can reach is exactly this table.

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

const V1 = {
  "GET /sandboxes": sandboxes.GET,
  "POST /sandboxes": sandboxes.POST,
  "GET /sandboxes/{id}": sandboxById.GET,
  "DELETE /sandboxes/{id}": sandboxById.DELETE,
  "POST /sandboxes/{id}/pause": pause.POST,
  "POST /sandboxes/{id}/resume": resume.POST,
  "POST /sandboxes/{id}/exec": exec.POST,
  "GET /sandboxes/{id}/files": files.GET,
  "POST /sandboxes/{id}/files": files.POST,
  "POST /sandboxes/{id}/snapshots": snapshots.POST,
  "GET /sandboxes/{id}/previews/{port}": preview.GET,
  "GET /limits": limits.GET,
  "GET /usage": usage.GET,
} satisfies Record<string, Handler>;

export type V1Route = keyof typeof V1;

export interface V1Call {
  params?: Record<string, string>;
  query?: Record<string, string | undefined>;
  body?: unknown;
}

/** What came back: the status and the parsed JSON body (null for an empty one). */
export interface V1Answer {
  status: number;
  body: unknown;
}

/** The headers of the MCP request that the v1 call keeps: who is asking, from where, and how. */
const KEPT_HEADERS = ["authorization", "host", "user-agent", "x-forwarded-for", "x-real-ip", "x-forwarded-proto"];

export async function callV1(from: Request, which: V1Route, call: V1Call = {}): Promise<V1Answer> {
  const [method, pattern] = which.split(" ") as [string, string];
  const path = pattern.replace(/\{(\w+)\}/g, (_, key: string) => encodeURIComponent(call.params?.[key] ?? ""));
  const url = new URL(`/api/v1${path}`, from.url);
  for (const [k, v] of Object.entries(call.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
  const headers = new Headers();
  for (const name of KEPT_HEADERS) {
    const value = from.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  if (call.body !== undefined) headers.set("content-type", "application/json");
  const req = markVia(
    new Request(url, { method, headers, body: call.body === undefined ? undefined : JSON.stringify(call.body) }),
    "mcp",
  );
  const handler: Handler = V1[which];
  const res = await handler(req, { params: Promise.resolve(call.params ?? {}) });
  const text = await res.text();
  let body: unknown = null;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  return { status: res.status, body };
}
