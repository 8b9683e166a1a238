import "server-only";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { HOST_NOT_ALLOWED, hostAllowed, type HostPolicy } from "../host-policy";
import { getEnv } from "./env";
import { CLIENT_IP_HEADER, markFrontDoor, normalizeAddress } from "./request-info";

// The console's front door: what scripts/console-server.mjs does to every request (HTTP and
// WebSocket upgrade) before Next or the terminal relay sees it.
//
// 1. Host: only the names Baton serves (lib/host-policy.ts). Anything else is a DNS-rebinding page
//    (evil.example resolving to 127.0.0.1) or a misrouted request: 421 Misdirected Request, JSON
//    `{detail, code: "host_not_allowed"}` under /api/, a plain page elsewhere.
// 2. The client's address, from the socket: X-Forwarded-For is believed only for the hops
//    BATON_TRUSTED_PROXIES says are Baton's own reverse proxies (rightmost-N, see
//    resolveClientAddress()). The result is written into CLIENT_IP_HEADER (and X-Forwarded-For),
//    after deleting whatever the client sent there; route handlers read only that header.
// 3. Without trusted proxies, the client's own X-Forwarded-Host/-Proto/-Port, X-Real-IP and
//    Forwarded are deleted too: nothing downstream may take them for a proxy's word.

/** Headers only a trusted reverse proxy may set; deleted when there is none. */
const PROXY_HEADERS = [
  "x-forwarded-for",
  "x-forwarded-host",
  "x-forwarded-proto",
  "x-forwarded-port",
  "x-real-ip",
  "forwarded",
] as const;

/**
 * The client's address with `hops` trusted reverse proxies in front: each proxy appends the address
 * it received the request from to X-Forwarded-For, so of the chain `[...X-Forwarded-For, socket
 * address]` the last `hops` entries are our proxies' peers we can vouch for and the entry before
 * them is the client. Everything further left was written by the client and is ignored. With
 * `hops` 0 the socket's address is the client's, whatever X-Forwarded-For says. A chain shorter
 * than expected (a request that bypassed a proxy) gives its leftmost entry, as Express's
 * `trust proxy` does; an entry that is not an IP address gives the nearest trusted address.
 */
export function resolveClientAddress(
  remoteAddress: string | null | undefined,
  forwardedFor: string | string[] | null | undefined,
  hops: number,
): string | null {
  const socket = normalizeAddress(remoteAddress);
  if (hops <= 0) return socket;
  const listed = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : (forwardedFor ?? ""))
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const chain = [...listed, remoteAddress ?? ""];
  const index = Math.max(0, chain.length - 1 - hops);
  for (let i = index; i < chain.length; i++) {
    const address = normalizeAddress(chain[i]);
    if (address) return address;
  }
  return socket;
}

export interface FrontDoorOptions {
  /** Reverse proxies in front whose X-Forwarded-* Baton believes (default: BATON_TRUSTED_PROXIES). */
  trustedProxies?: number;
  /** Host names served (default: the process environment's, lib/host-policy.ts). */
  policy?: () => HostPolicy;
}

export interface FrontDoor {
  /** Checks and rewrites an HTTP request in place; true when it has answered it (refused). */
  request(req: IncomingMessage, res: ServerResponse): boolean;
  /** The same for a WebSocket upgrade; true when it has answered (and closed) the socket. */
  upgrade(req: IncomingMessage, socket: Duplex): boolean;
  readonly trustedProxies: number;
  /** The Host names served, for the start-up log. */
  readonly hosts: string;
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

type Refusal = { status: 400 | 421; json: { detail: string; code: string }; text: string };

const MISDIRECTED: Refusal = {
  status: 421,
  json: HOST_NOT_ALLOWED,
  text: `421 Misdirected Request\n\n${HOST_NOT_ALLOWED.detail}\n`,
};
const BAD_TARGET: Refusal = {
  status: 400,
  json: { detail: "The request target must be a path (origin-form).", code: "bad_request" },
  text: "400 Bad Request\n\nThe request target must be a path.\n",
};

export function createFrontDoor(options: FrontDoorOptions = {}): FrontDoor {
  const trustedProxies = options.trustedProxies ?? getEnv().BATON_TRUSTED_PROXIES;
  const policy = options.policy;
  markFrontDoor();

  /** Why the request is refused, or null; rewrites its forwarding headers when it is not. */
  const admit = (req: IncomingMessage): Refusal | null => {
    // Absolute-form targets (`GET http://other/ HTTP/1.1`) would let the URL name another host than Host.
    if (!req.url || !(req.url.startsWith("/") || (req.url === "*" && req.method === "OPTIONS"))) return BAD_TARGET;
    const current = policy?.();
    if (!hostAllowed(header(req, "host"), current)) return MISDIRECTED;
    const forwardedHost = header(req, "x-forwarded-host")?.split(",")[0]?.trim();
    if (trustedProxies > 0 && forwardedHost && !hostAllowed(forwardedHost, current)) return MISDIRECTED;

    const client = resolveClientAddress(req.socket.remoteAddress, req.headers["x-forwarded-for"], trustedProxies);
    delete req.headers[CLIENT_IP_HEADER];
    if (trustedProxies === 0) for (const name of PROXY_HEADERS) delete req.headers[name];
    if (client) {
      req.headers[CLIENT_IP_HEADER] = client;
      req.headers["x-forwarded-for"] = client;
    } else {
      delete req.headers["x-forwarded-for"];
    }
    return null;
  };

  const wantsJson = (req: IncomingMessage) => (req.url ?? "").startsWith("/api/");

  return {
    trustedProxies,
    get hosts() {
      return (policy?.() ?? getEnv().hostPolicy).summary;
    },
    request(req, res) {
      const refusal = admit(req);
      if (!refusal) return false;
      const json = wantsJson(req);
      const body = json ? JSON.stringify(refusal.json) : refusal.text;
      res.writeHead(refusal.status, {
        "content-type": json ? "application/json" : "text/plain; charset=utf-8",
        "content-length": Buffer.byteLength(body),
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
        connection: "close",
      });
      res.end(req.method === "HEAD" ? undefined : body);
      return true;
    },
    upgrade(req, socket) {
      const refusal = admit(req);
      if (!refusal) return false;
      const body = JSON.stringify(refusal.json);
      const reason = refusal.status === 421 ? "Misdirected Request" : "Bad Request";
      socket.end(
        `HTTP/1.1 ${refusal.status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      return true;
    },
  };
}

/** The paths lib/server/api-fast-path.ts may answer: the v1 contract and the MCP endpoint. */
function onFastPath(url: string | undefined): boolean {
  if (!url) return false;
  return url.startsWith("/api/v1/") || url === "/api/mcp" || url.startsWith("/api/mcp?");
}

export interface ConsoleServerParts {
  frontDoor: FrontDoor;
  /** Next's request handler (`app.getRequestHandler()`), or a stand-in in tests. */
  handle: (req: IncomingMessage, res: ServerResponse) => unknown;
  /** The terminal relay: true when it took the upgrade. */
  upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => boolean;
  /** Dev only: Next's own upgrades (HMR under /_next/); Next would leave any other socket hanging. */
  nextUpgrade?: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /**
   * The `/api/v1/**` and `/api/mcp` route handlers called without Next in between (lib/server/api-fast-path.ts):
   * resolves true when it answered, false to hand the request to Next.
   */
  api?: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;
}

/**
 * The console's HTTP server as scripts/console-server.mjs runs it: the front door first, for every
 * request and every upgrade, then the `/api/v1/**` fast path, Next's handler or the terminal relay. Nothing else upgrades in
 * production (Next's own upgrades are dev-only HMR): 404; in dev, Next gets the rest.
 */
export function createConsoleServer(parts: ConsoleServerParts): http.Server {
  const server = http.createServer((req, res) => {
    if (parts.frontDoor.request(req, res)) return;
    if (parts.api && onFastPath(req.url)) {
      parts.api(req, res).then(
        (answered) => {
          if (!answered) void parts.handle(req, res);
        },
        (err: unknown) => {
          console.error(`[baton] ${req.method} ${req.url}:`, err);
          if (!res.headersSent) res.writeHead(500, { "content-type": "application/json", "cache-control": "no-store" });
          res.end(
            res.headersSent ? undefined : JSON.stringify({ detail: "Internal server error.", code: "internal_error" }),
          );
        },
      );
      return;
    }
    void parts.handle(req, res);
  });
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => undefined);
    if (parts.frontDoor.upgrade(req, socket)) return;
    if (parts.upgrade(req, socket, head)) return;
    if (parts.nextUpgrade && req.url?.startsWith("/_next/")) return parts.nextUpgrade(req, socket, head);
    socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
  });
  return server;
}
