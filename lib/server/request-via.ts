import "server-only";

// How a request reached Baton's API, when it was not a person's browser: "mcp" for the calls
// Baton's MCP endpoint makes of its own /api/v1 handlers (lib/server/mcp/v1-call.ts). The mark is
// kept beside the Request object, in this process, so no client can claim it with a header.

export type RequestVia = "mcp";

const marks = new WeakMap<Request, RequestVia>();

export function markVia(req: Request, via: RequestVia): Request {
  marks.set(req, via);
  return req;
}

export function viaOf(req: Request): RequestVia | null {
  return marks.get(req) ?? null;
}
