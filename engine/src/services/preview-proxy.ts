import type { FastifyServerFactory } from "fastify";
import http, { STATUS_CODES, type IncomingMessage, type ServerResponse } from "node:http";
import net from "node:net";
import type { Duplex } from "node:stream";
import { pipeline } from "node:stream";
import { ApiError } from "../errors.js";
import { matchPreviewHost, type PreviewHostMatch } from "../lib/preview-host.js";
import {
  PREVIEW_COOKIE,
  PREVIEW_COOKIE_LAX,
  PREVIEW_TOKEN_HEADER,
  takeTokenParam,
  withoutCookie,
  type PreviewService,
} from "./previews.js";
import type { SandboxRow } from "./sandboxes.js";

/**
 * The preview proxy's HTTP side. Preview hosts are claimed at the HTTP server itself, before
 * Fastify sees the request: none of them reaches a /v1 or /_admin route, the API's bearer auth,
 * its fault injection or its body parsers. Bodies stream both ways unbuffered; upgrades
 * (WebSocket, dev-server HMR) become a byte tunnel to the server inside the sandbox.
 */

/** Request headers that describe this hop only; the Connection header may list more. */
const REQUEST_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "te",
  "trailer",
  "upgrade",
  "expect",
]);
/** Response headers Node sets itself for the client's connection. */
const RESPONSE_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "trailer",
  "upgrade",
]);

/** Absolute-form targets ("GET http://host/p") become origin-form; everything else passes as sent. */
function originForm(url: string | undefined): string {
  const u = url ?? "/";
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(u)) return u;
  try {
    const parsed = new URL(u);
    return parsed.pathname + parsed.search;
  } catch {
    return "/";
  }
}

function connectionListed(req: IncomingMessage): Set<string> {
  return new Set(
    String(req.headers.connection ?? "")
      .toLowerCase()
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
  );
}

/**
 * The headers that go into the sandbox: the client's own, minus hop-by-hop ones, the preview token
 * header and the preview cookie, plus X-Forwarded-* (kept when a proxy in front already set them).
 * Host passes unchanged: dev servers check it and build their HMR URLs from it.
 */
export function upstreamHeaders(req: IncomingMessage, upgrade: boolean): string[] {
  const listed = connectionListed(req);
  const out: string[] = [];
  const forwardedFor: string[] = [];
  const seen = new Set<string>();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    const value = raw[i + 1]!;
    if (lower === PREVIEW_TOKEN_HEADER) continue;
    if (upgrade && (lower === "connection" || lower === "upgrade")) {
      out.push(name, value);
      continue;
    }
    if (REQUEST_HOP.has(lower) || listed.has(lower)) continue;
    if (lower === "x-forwarded-for") {
      forwardedFor.push(value);
      continue;
    }
    if (lower === "cookie") {
      const rest = withoutCookie(withoutCookie(value, PREVIEW_COOKIE) ?? "", PREVIEW_COOKIE_LAX);
      if (rest) out.push(name, rest);
      continue;
    }
    seen.add(lower);
    out.push(name, value);
  }
  const client = req.socket.remoteAddress ?? "";
  out.push("X-Forwarded-For", [...forwardedFor, client].filter(Boolean).join(", "));
  if (!seen.has("x-forwarded-host") && req.headers.host) out.push("X-Forwarded-Host", req.headers.host);
  if (!seen.has("x-forwarded-proto")) out.push("X-Forwarded-Proto", "http");
  if (!seen.has("x-forwarded-port") && req.socket.localPort) out.push("X-Forwarded-Port", String(req.socket.localPort));
  return out;
}

function responseHeaders(res: IncomingMessage): string[] {
  const listed = connectionListed(res);
  const out: string[] = [];
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const lower = raw[i]!.toLowerCase();
    if (RESPONSE_HOP.has(lower) || listed.has(lower)) continue;
    out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}

/**
 * A preview error as a plain page (a browser is usually the client), or as the API's JSON error
 * body when the client asks for JSON (or `asJson`: a refusal on the API's side). The code is also
 * in a header for tools.
 */
function errorPage(
  err: ApiError,
  req: IncomingMessage,
  asJson = false,
): { status: number; headers: Record<string, string>; body: string } {
  const accept = String(req.headers.accept ?? "");
  const json = asJson || (accept.includes("application/json") && !accept.includes("text/html"));
  const detail = typeof err.detail === "string" ? err.detail : err.code;
  const body = json
    ? JSON.stringify({ detail, code: err.code, ...err.extra })
    : `${err.status} ${STATUS_CODES[err.status] ?? ""}\n\n${detail}\n\n(${err.code})\n`;
  return {
    status: err.status,
    headers: {
      ...err.headers,
      "Content-Type": json ? "application/json" : "text/plain; charset=utf-8",
      "Content-Length": String(Buffer.byteLength(body)),
      "Cache-Control": "no-store",
      "X-Content-Type-Options": "nosniff",
      "X-Orkestr-Error-Code": err.code,
    },
    body,
  };
}

function asApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  console.error(`[engine] preview proxy: ${(e as Error)?.stack ?? String(e)}`);
  return new ApiError("internal_error", "Internal engine error while proxying this preview; see the engine log");
}

function sendPage(res: ServerResponse, req: IncomingMessage, e: unknown, asJson = false): void {
  const page = errorPage(asApiError(e), req, asJson);
  if (res.headersSent) return void res.destroy();
  res.writeHead(page.status, page.headers);
  res.end(req.method === "HEAD" ? undefined : page.body);
}

function writeRawPage(socket: Duplex, req: IncomingMessage, e: unknown, asJson = false): void {
  if (socket.destroyed || !socket.writable) return void socket.destroy();
  const page = errorPage(asApiError(e), req, asJson);
  const head = [
    `HTTP/1.1 ${page.status} ${STATUS_CODES[page.status] ?? ""}`,
    ...Object.entries(page.headers).map(([k, v]) => `${k}: ${v}`),
    "Connection: close",
  ];
  socket.end(`${head.join("\r\n")}\r\n\r\n${page.body}`);
}

/** The request's target with the preview token taken out, the token, and the sandbox port the host names. */
function previewTarget(
  match: PreviewHostMatch,
  req: IncomingMessage,
): { target: string; token: string | null; port: number } {
  const { target, token } = takeTokenParam(originForm(req.url));
  return { target, token, port: match.kind === "preview" ? match.port : 0 };
}

/**
 * What a proxied request and an upgrade both check before anything reaches the sandbox: the
 * sandbox the host names, and the caller's preview token (refused as preview_auth_required with
 * `deniedDetail`, which says where the token goes for this kind of request). Throws ApiErrors,
 * which each caller answers in its own way (an HTTP page, or raw bytes on the socket).
 */
function admit(
  previews: PreviewService,
  match: PreviewHostMatch,
  req: IncomingMessage,
  request: { target: string; token: string | null; port: number },
  deniedDetail: string,
): { row: SandboxRow; auth: Exclude<ReturnType<PreviewService["authorize"]>, { kind: "denied" }> } {
  const row = previews.lookup(match);
  const auth = previews.authorize(row, request.port, req, request.target, request.token);
  if (auth.kind === "denied") throw new ApiError("preview_auth_required", deniedDetail);
  return { row, auth };
}

async function proxyRequest(
  previews: PreviewService,
  match: PreviewHostMatch,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const request = previewTarget(match, req);
  const { target, port } = request;
  let row;
  let relay;
  try {
    let auth;
    ({ row, auth } = admit(
      previews,
      match,
      req,
      request,
      "This preview needs the sandbox's preview_auth_token: send it in X-Orkestr-Preview-Token, or open the URL once with ?orkestr_token=<token>",
    ));
    if (auth.kind === "redirect") {
      res.writeHead(302, {
        Location: auth.location,
        "Set-Cookie": auth.cookies,
        "Cache-Control": "no-store",
        "Referrer-Policy": "no-referrer",
        "Content-Length": "0",
      });
      return void res.end();
    }
    relay = await previews.connect(row, port);
  } catch (e) {
    return sendPage(res, req, e);
  }
  // The client may have left while the sandbox woke up.
  if (res.destroyed) return;
  const sandboxId = row.id;
  const via = relay;
  // Without a body a request can be sent again: once, when a kept-alive connection to the server
  // turns out to have been closed by it just as it was reused.
  const bodyless =
    (req.headers["content-length"] === undefined || req.headers["content-length"] === "0") &&
    req.headers["transfer-encoding"] === undefined;
  let current: http.ClientRequest | null = null;
  const send = (mayRetry: boolean) => {
    const upstream = http.request({
      socketPath: via.socketPath,
      agent: via.agent,
      method: req.method,
      path: target,
      headers: upstreamHeaders(req, false) as unknown as http.OutgoingHttpHeaders,
    });
    current = upstream;
    upstream.on("response", (up) => {
      try {
        res.writeHead(up.statusCode ?? 502, up.statusMessage || undefined, responseHeaders(up));
      } catch (e) {
        up.destroy();
        return sendPage(
          res,
          req,
          new ApiError(
            "preview_upstream_error",
            `The server in sandbox ${sandboxId} sent an invalid response: ${(e as Error).message}`,
          ),
        );
      }
      // Flush the head now: an event stream's first bytes may be long in coming.
      res.flushHeaders();
      pipeline(up, res, (err) => {
        if (err) {
          upstream.destroy();
          res.destroy();
        }
      });
    });
    upstream.on("error", (e) => {
      if (res.headersSent || res.destroyed) return void res.destroy();
      if (mayRetry && bodyless && upstream.reusedSocket) return send(false);
      sendPage(res, req, previews.upstreamFailure(sandboxId, port, via, e));
    });
    if (bodyless) upstream.end();
  };
  // A client that goes away takes its upstream request with it.
  res.on("close", () => {
    if (!res.writableFinished) current?.destroy();
  });
  req.on("error", () => current?.destroy());
  send(true);
  if (bodyless) req.resume();
  else req.pipe(current!);
}

async function proxyUpgrade(
  previews: PreviewService,
  match: PreviewHostMatch,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): Promise<void> {
  socket.on("error", () => undefined);
  const request = previewTarget(match, req);
  const { target, port } = request;
  let row;
  let relay;
  try {
    // An upgrade cannot follow a redirect: a valid ?orkestr_token= simply authorizes it.
    ({ row } = admit(
      previews,
      match,
      req,
      request,
      "This preview needs the sandbox's preview_auth_token (X-Orkestr-Preview-Token, the preview cookie, or ?orkestr_token=)",
    ));
    relay = await previews.connect(row, port);
  } catch (e) {
    return writeRawPage(socket, req, e);
  }
  if (socket.destroyed) return;
  const sandboxId = row.id;
  const headers = upstreamHeaders(req, true);
  const lines = [`${req.method} ${target} HTTP/1.1`];
  for (let i = 0; i + 1 < headers.length; i += 2) lines.push(`${headers[i]}: ${headers[i + 1]}`);
  const up = net.connect(relay.socketPath);
  up.on("connect", () => {
    up.write(`${lines.join("\r\n")}\r\n\r\n`);
    if (head.length) up.write(head);
    socket.pipe(up);
  });
  // Until the server's first byte, a failure is still ours to answer with a page.
  let answered = false;
  up.once("data", () => (answered = true));
  up.pipe(socket, { end: false });
  up.on("end", () =>
    answered
      ? socket.end()
      : writeRawPage(socket, req, previews.upstreamFailure(sandboxId, port, relay, new Error("connection closed"))),
  );
  up.on("error", (e) =>
    answered ? socket.destroy() : writeRawPage(socket, req, previews.upstreamFailure(sandboxId, port, relay, e)),
  );
  socket.on("close", () => up.destroy());
}

/**
 * Why a request is refused for its Host before anything else sees it, or null. RFC 9112 §3.2: no
 * Host, or more than one, is a 400. A host that is neither a preview nor one of the API's names is
 * a 421 (DNS rebinding: see lib/api-host.ts); so is an absolute-form target naming another host.
 */
function hostRefusal(
  req: IncomingMessage,
  match: PreviewHostMatch | null,
  apiHost: (host: string) => boolean,
): ApiError | null {
  let hosts = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === "host") hosts++;
  if (hosts !== 1)
    return new ApiError("bad_request", hosts ? "Send one Host header, not several" : "Send a Host header");
  if (match) return null;
  const host = req.headers.host ?? "";
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(req.url ?? "")?.[1];
  for (const name of authority === undefined ? [host] : [host, authority]) {
    if (!apiHost(name)) {
      return new ApiError(
        "host_not_allowed",
        `This engine does not answer for host "${name.slice(0, 100)}"; to serve the API under that name, add it to ORKESTR_ENGINE_ALLOWED_HOSTS`,
      );
    }
  }
  return null;
}

/**
 * An http.Server that checks every request's Host (requests and upgrades alike) and hands preview
 * hosts to the preview proxy before any listener sees them: Fastify's request handler and the PTY
 * upgrade dispatcher only ever get the API's own hosts.
 */
class PreviewAwareServer extends http.Server {
  constructor(
    private readonly previews: PreviewService,
    private readonly apiHost: (host: string) => boolean,
    options: http.ServerOptions,
    handler: http.RequestListener,
  ) {
    super(options, handler);
  }

  override emit(event: string, ...args: unknown[]): boolean {
    if (event === "request" || event === "upgrade") {
      const req = args[0] as IncomingMessage;
      const match = matchPreviewHost(req.headers.host);
      const refusal = hostRefusal(req, match, this.apiHost);
      if (refusal) {
        if (event === "request") sendPage(args[1] as ServerResponse, req, refusal, true);
        else writeRawPage(args[1] as Duplex, req, refusal, true);
        return true;
      }
      if (match) {
        if (event === "request") void proxyRequest(this.previews, match, req, args[1] as ServerResponse);
        else void proxyUpgrade(this.previews, match, req, args[1] as Duplex, args[2] as Buffer);
        return true;
      }
    }
    return super.emit(event, ...args);
  }
}

/**
 * Fastify's serverFactory: its own HTTP/1 server setup (timeouts as Fastify sets them), preview-aware
 * and Host-checking. `apiHost` says whether a Host names the API (lib/api-host.ts).
 */
export function previewServerFactory(
  previews: PreviewService,
  apiHost: (host: string) => boolean,
): FastifyServerFactory {
  return (handler, opts) => {
    const o = opts as {
      http?: http.ServerOptions;
      keepAliveTimeout?: number;
      requestTimeout?: number;
      connectionTimeout?: number;
    };
    // Requests without a Host reach emit(), which answers them in the API's error shape (Node's own
    // refusal is an empty 400).
    const server = new PreviewAwareServer(
      previews,
      apiHost,
      { ...o.http, requireHostHeader: false },
      handler as http.RequestListener,
    );
    if (o.keepAliveTimeout !== undefined) server.keepAliveTimeout = o.keepAliveTimeout;
    if (o.requestTimeout !== undefined) server.requestTimeout = o.requestTimeout;
    server.setTimeout(o.connectionTimeout ?? 0);
    return server;
  };
}
