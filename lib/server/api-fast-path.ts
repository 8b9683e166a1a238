import "server-only";
import fs from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { Readable } from "node:stream";
import { API_CSP, isHttps, securityHeaders } from "../security-headers";
import { errorResponse } from "./errors";
import { knownJsonBytes } from "./json-response";
import { withKnownBytes } from "./request-bytes";

// The console server's direct line to the `/api/v1/**` route handlers: the proxy routes every
// sandbox page calls many times a second. Next's request pipeline (routing, its proxy.ts
// invocation, request and response wrapping, tracing) costs about as much as the engine call
// behind it, so the console server calls these handlers itself:
//
// - the SAME route files Next serves (app/api/v1/**/route.ts, found on disk by Next's own rules:
//   `[name]` is a segment parameter, a static segment wins over a parameter), with the same
//   exported GET/POST/… handlers. Every one is a route() (lib/server/route.ts): Host and Origin
//   checks, the session, the permission, zod parsing, `{detail, code}` errors — all in the handler,
//   nothing here. There is no second copy of any route;
// - after the front door (lib/server/front-door.ts), like every request;
// - with the security headers proxy.ts gives every response, and the strictest CSP (API_CSP: these
//   JSON, stream and file answers are never documents, so they need none of its page work: no
//   nonce, no request-path header);
// - anything else goes to Next untouched: paths that match no route file, a method the file does
//   not export (Next's 405 and automatic OPTIONS/HEAD), a trailing slash, an undecodable segment.

/** A route handler as Next calls it. */
export type ApiHandler = (
  req: Request,
  ctx: { params: Promise<Record<string, string | string[] | undefined>> },
) => Promise<Response>;

type Segment = { kind: "static"; value: string } | { kind: "param"; name: string };

export interface ApiRouteFile {
  /** e.g. "/api/v1/sandboxes/[id]/exec" */
  pattern: string;
  segments: Segment[];
  file: string;
}

const PARAM = /^\[([A-Za-z_][A-Za-z0-9_]*)\]$/;

/**
 * The route files under `dir` (app/api/v1), served at `prefix` (/api/v1). A directory name Next
 * gives another meaning (catch-alls `[...x]`, route groups `(x)`, private `_x`, parallel `@x`)
 * throws: this table would not follow Next's rules for it, so it must be taught them first.
 */
export function findApiRoutes(dir: string, prefix: string): ApiRouteFile[] {
  const out: ApiRouteFile[] = [];
  const walk = (at: string, segments: Segment[]) => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      if (entry.isFile() && /^route\.(ts|js)$/.test(entry.name)) {
        const base: Segment[] = prefix
          .split("/")
          .filter(Boolean)
          .map((value) => ({ kind: "static", value }));
        const all = [...base, ...segments];
        out.push({
          pattern: "/" + all.map((s) => (s.kind === "static" ? s.value : `[${s.name}]`)).join("/"),
          segments: all,
          file: path.join(at, entry.name),
        });
      } else if (entry.isDirectory()) {
        const param = PARAM.exec(entry.name);
        if (param) walk(path.join(at, entry.name), [...segments, { kind: "param", name: param[1]! }]);
        else if (/^[A-Za-z0-9._-]+$/.test(entry.name) && !entry.name.startsWith("_"))
          walk(path.join(at, entry.name), [...segments, { kind: "static", value: entry.name }]);
        else throw new Error(`api fast path: ${path.join(at, entry.name)} is a kind of route it does not know`);
      }
    }
  };
  walk(dir, []);
  return out;
}

interface Node {
  statics: Map<string, Node>;
  param?: { name: string; node: Node };
  route?: ApiRouteFile;
}

const newNode = (): Node => ({ statics: new Map() });

/** The route file for a path and its decoded params, or null (then Next answers). */
export function matcher(routes: ApiRouteFile[]) {
  const root = newNode();
  for (const r of routes) {
    let node = root;
    for (const s of r.segments) {
      if (s.kind === "static") {
        let next = node.statics.get(s.value);
        if (!next) node.statics.set(s.value, (next = newNode()));
        node = next;
      } else {
        if (node.param && node.param.name !== s.name)
          throw new Error(`api fast path: [${node.param.name}] and [${s.name}] at the same place (${r.pattern})`);
        node.param ??= { name: s.name, node: newNode() };
        node = node.param.node;
      }
    }
    node.route = r;
  }
  const find = (node: Node, parts: string[], i: number, params: Record<string, string>): ApiRouteFile | null => {
    if (i === parts.length) return node.route ?? null;
    const part = parts[i]!;
    // A static segment wins over a parameter (Next: /sandboxes/limits is not /sandboxes/[id]).
    const stat = node.statics.get(part);
    if (stat) {
      const found = find(stat, parts, i + 1, params);
      if (found) return found;
    }
    if (node.param) {
      let value: string;
      try {
        value = decodeURIComponent(part);
      } catch {
        return null;
      }
      const found = find(node.param.node, parts, i + 1, params);
      if (found) {
        params[node.param.name] = value;
        return found;
      }
    }
    return null;
  };
  return (pathname: string): { route: ApiRouteFile; params: Record<string, string> } | null => {
    const parts = pathname.split("/").slice(1);
    if (parts.some((p) => p === "")) return null; // trailing or doubled slash: Next's redirect
    const params: Record<string, string> = {};
    const route = find(root, parts, 0, params);
    return route ? { route, params } : null;
  };
}

const METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE"]);

export interface ApiFastPath {
  /** Answers the request when a route file's handler serves it; false when Next must (nothing read yet). */
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  /** Loads every route module ahead of the first request. */
  preload(): Promise<void>;
}

export interface ApiFastPathOptions {
  routes: ApiRouteFile[];
  /** Imports a route file (the console server: tsx's namespaced import). */
  load: (file: string) => Promise<Record<string, unknown>>;
}

/** The whole URL as Next gives it to a route handler: the Host header's origin and the path. */
function requestUrl(req: IncomingMessage): string {
  return `http://${req.headers.host ?? "localhost"}${req.url ?? "/"}`;
}

/** Request bodies with a Content-Length up to this are read before the handler runs (see smallBody). */
const PREREAD_MAX = 64 * 1024;

/**
 * A request body with a declared length of at most PREREAD_MAX, read whole off the socket, or null
 * for anything else (chunked, larger: those reach the handler as a stream, which route() counts as
 * it reads). Every JSON body the console's pages send is one of these: as one Buffer it costs the
 * handler's body read a single chunk instead of a web stream adapted from the socket's stream.
 */
function smallBody(req: IncomingMessage): Promise<Buffer> | null {
  const declared = req.headers["content-length"];
  if (declared === undefined || req.headers["transfer-encoding"] !== undefined) return null;
  const length = Number(declared);
  if (!Number.isInteger(length) || length < 0 || length > PREREAD_MAX) return null;
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.once("end", () => resolve(Buffer.concat(chunks)));
    req.once("error", reject);
    // The client left halfway: no handler runs for a body that never came.
    req.once("close", () => {
      if (!req.complete) reject(new Error("the client closed the connection before its request body ended"));
    });
  });
}

/**
 * req.headers as the front door left them (its client-address header written, a client's own
 * forwarding headers deleted), as name/value pairs: what Next builds its request from too. Given
 * to the Request constructor as they are, they are validated and copied once; filled into a Headers
 * first, the constructor would copy that Headers a second time.
 */
function headerPairs(req: IncomingMessage): [string, string][] {
  const pairs: [string, string][] = [];
  const headers = req.headers;
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) pairs.push([name, v]);
    else pairs.push([name, value]);
  }
  return pairs;
}

/**
 * The headers for the Request constructor: req.headers itself when every value is a string (every
 * request but one repeating Set-Cookie), which the constructor copies fastest; else headerPairs().
 */
function headersInit(req: IncomingMessage): Record<string, string> | [string, string][] {
  const headers = req.headers;
  for (const name in headers) if (typeof headers[name] !== "string") return headerPairs(req);
  return headers as Record<string, string>;
}

/** The same headers one at a time, a value Headers refuses dropped (as Next does). */
function lenientHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of headerPairs(req)) {
    try {
      headers.append(name, value);
    } catch {
      // a value Headers refuses: dropped
    }
  }
  return headers;
}

async function toRequest(req: IncomingMessage, method: string, signal: AbortSignal): Promise<Request> {
  const hasBody = method !== "GET" && method !== "HEAD";
  const pending = hasBody ? smallBody(req) : null;
  const whole = pending ? await pending : null;
  const init = {
    method,
    // A body read whole stays beside the Request (lib/server/request-bytes.ts), not in a stream.
    body: hasBody && !whole ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : undefined,
    // Node's fetch Request requires this for a streamed body.
    ...(hasBody && !whole ? { duplex: "half" } : {}),
  };
  let request: Request;
  try {
    request = new Request(requestUrl(req), { ...init, headers: headersInit(req) } as RequestInit);
  } catch (err) {
    // Node's parser lets through little that Headers refuses; for what it does, the slow way.
    if (!(err instanceof TypeError)) throw err;
    request = new Request(requestUrl(req), { ...init, headers: lenientHeaders(req) } as RequestInit);
  }
  // `signal` aborts when the client goes away, as Next's request's does: streaming handlers (exec,
  // events, live, file downloads) end their upstream reads on it. It is the fast path's own signal,
  // set on the Request as it is rather than given to the constructor, which would make a second
  // signal following it (an AbortController, a listener, a finalization registration: a good part
  // of the constructor's cost, on every request). Only `req.signal` is read by Baton's handlers;
  // nothing copies or re-fetches these Requests.
  Object.defineProperty(request, "signal", { value: signal, enumerable: false });
  return whole ? withKnownBytes(request, whole) : request;
}

const JSON_BUFFER_MAX = 1024 * 1024;

/** Writes a Response to the socket, streaming its body chunk by chunk as it comes (SSE, NDJSON, files). */
async function send(res: ServerResponse, response: Response, extra: Record<string, string>): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) headers["set-cookie"] = cookies;
  // The handler's own win: a file download's `default-src 'none'; sandbox` CSP stays as it set it.
  for (const [name, value] of Object.entries(extra)) headers[name.toLowerCase()] ??= value;
  const body = response.body;
  if (res.destroyed) {
    // The client left while the handler worked: nobody to answer, and a stream must not run on.
    await body?.cancel().catch(() => undefined);
    return;
  }
  if (!body) {
    res.writeHead(response.status, headers).end();
    return;
  }
  const known = knownJsonBytes(response);
  if (known) {
    headers["content-length"] = String(known.length);
    res.writeHead(response.status, headers).end(known);
    return;
  }
  const reader = body.getReader();
  let closed = false;
  const onClose = () => {
    closed = true;
    // The client went away: stop the upstream stream too (an exec stream, an event feed).
    void reader.cancel().catch(() => undefined);
  };
  res.once("close", onClose);
  // A JSON document (not a stream of them) is read whole and sent with its length in one write:
  // on loopback every socket write costs a wake-up of the other side, and chunked encoding would
  // add a second write for its terminator. A body past JSON_BUFFER_MAX goes on as a stream.
  const chunks: Uint8Array[] = [];
  if (/^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(response.headers.get("content-type") ?? "")) {
    let size = 0;
    for (;;) {
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await reader.read();
      } catch {
        res.off("close", onClose);
        res.destroy();
        return;
      }
      if (next.done) {
        res.off("close", onClose);
        if (closed) return;
        const whole = Buffer.concat(chunks);
        headers["content-length"] = String(whole.length);
        res.writeHead(response.status, headers).end(whole);
        return;
      }
      chunks.push(next.value);
      size += next.value.byteLength;
      if (size > JSON_BUFFER_MAX) break;
    }
  }
  if (closed) return;
  res.writeHead(response.status, headers);
  for (const chunk of chunks) res.write(chunk);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || closed) break;
      if (!res.write(value) && !res.destroyed)
        await new Promise<void>((resolve) => {
          const go = () => {
            res.off("drain", go);
            res.off("close", go);
            resolve();
          };
          res.on("drain", go);
          res.on("close", go);
        });
    }
  } catch {
    // the upstream stream broke off: end what was sent (the client sees a truncated stream, as through Next)
    res.destroy();
    return;
  } finally {
    res.off("close", onClose);
  }
  if (!closed) res.end();
}

export function createApiFastPath(options: ApiFastPathOptions): ApiFastPath {
  const match = matcher(options.routes);
  const modules = new Map<string, Promise<Record<string, unknown>>>();
  // Loaded modules by file, taken without an await on every request after the first.
  const ready = new Map<string, Record<string, unknown>>();
  const load = (file: string) => {
    let mod = modules.get(file);
    if (!mod) {
      mod = options.load(file);
      modules.set(file, mod);
      mod.then(
        (m) => ready.set(file, m),
        () => modules.delete(file),
      );
    }
    return mod;
  };

  return {
    async handle(req, res) {
      const method = req.method ?? "GET";
      if (!METHODS.has(method)) return false;
      const url = req.url ?? "/";
      const q = url.indexOf("?");
      const found = match(q < 0 ? url : url.slice(0, q));
      if (!found) return false;
      const handler = (ready.get(found.route.file) ?? (await load(found.route.file)))[method];
      if (typeof handler !== "function") return false;
      // The console server speaks plain HTTP: HTTPS is what a trusted proxy in front says it was.
      const proto = req.headers["x-forwarded-proto"];
      const secure = isHttps(typeof proto === "string" ? proto : null, "http:");
      // Listening from the start: a client that leaves before the answer begins aborts the handler's
      // request too (a close that fired during the handler would otherwise never be seen).
      const gone = new AbortController();
      res.once("close", () => {
        if (!res.writableFinished) gone.abort();
      });
      let response: Response;
      try {
        response = await (handler as ApiHandler)(await toRequest(req, method, gone.signal), {
          params: Promise.resolve(found.params),
        });
      } catch (err) {
        // route() turns everything into a Response; this is for a handler that is not one.
        response = errorResponse(err, `${method} ${found.route.pattern}`);
      }
      await send(res, response, securityHeaders(API_CSP, { https: secure }));
      return true;
    },
    async preload() {
      for (const r of options.routes) await load(r.file).catch(() => undefined);
    },
  };
}
