import "server-only";
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import net from "node:net";
import type { Duplex } from "node:stream";
import { WebSocket, WebSocketServer, type RawData } from "ws";
import { path } from "../orkestr/path";
import { HOST_NOT_ALLOWED, hostAllowed, originAllowed as isBatonOrigin } from "../host-policy";
import { activeMembership, resolveSession } from "./auth";
import { getMigratedDb } from "./db/index";
import { HEARTBEAT_PING, HEARTBEAT_PONG } from "../terminal-heartbeat";
import { upstreamFailureDetail } from "./errors";
import { can } from "./rbac";
import { parseCookieHeader, readSessionId } from "./session-cookie";
import { classifyDestination, guardedLookupFor } from "./ssrf";
import { orkestrUpgradeFor, VaultError, type OrkestrUpgradeTarget } from "./tokens";

// The terminal WebSocket relay. Next.js route handlers cannot accept a WebSocket upgrade, and a
// browser cannot put the orkestr token on a WebSocket (nor may it ever see it), so the console's own
// server (scripts/console-server.mjs) hands upgrade requests for
//   /api/v1/sandboxes/{id}/pty/{pid}/ws
// to this module. It does what route() does for HTTP: Host and Origin checks, the Baton session (cookie →
// sessions row), the `sandboxes.write` permission; then it opens the upstream PTY WebSocket with
// the user's token from the vault and pipes frames both ways, unchanged (binary = terminal bytes,
// text = JSON control messages). Nothing of the upstream handshake reaches the browser.

export const PTY_RELAY_PATH = /^\/api\/v1\/sandboxes\/([A-Za-z0-9_-]{1,64})\/pty\/([A-Za-z0-9_-]{1,64})\/ws\/?$/;
/** Browser → upstream frames are keystrokes and control messages: small. */
const MAX_FRAME_BYTES = 1024 * 1024;
/** Upstream reads pause while the browser has this much unsent (a slow tab must not fill our memory). */
const HIGH_WATER = 1024 * 1024;
const LOW_WATER = 256 * 1024;
/** Keystrokes typed while the upstream socket is still opening are kept up to this much. */
const MAX_QUEUED_BYTES = 64 * 1024;
/** Both sockets are pinged this often; one that has not answered the previous ping is dropped. */
const PING_MS = 25_000;
const UPSTREAM_HANDSHAKE_MS = 10_000;

/** Close codes the browser sees when the upstream refused or failed: 4000 + its HTTP status, or these. */
export const CLOSE_UPSTREAM_UNREACHABLE = 4502;
export const CLOSE_NO_CONNECTION = 4409;

export interface PtyRelayTarget {
  sandboxId: string;
  ptyId: string;
}

/** The sandbox and session an upgrade request is for, or null when the path is not the relay's. */
export function matchPtyRelayPath(url: string | undefined): PtyRelayTarget | null {
  const m = PTY_RELAY_PATH.exec((url ?? "").split("?")[0]!);
  return m ? { sandboxId: m[1]!, ptyId: m[2]! } : null;
}

export type RelayAuthResult =
  { ok: true; userId: string } | { ok: false; status: 401 | 403 | 421; code: string; detail: string };

function header(headers: IncomingHttpHeaders, name: string): string | null {
  const v = headers[name];
  return Array.isArray(v) ? (v[0] ?? null) : (v ?? null);
}

/**
 * Cross-site WebSocket hijacking defence: browsers always send Origin on a WebSocket, and the
 * session cookie goes along whatever the page, so the Origin must be one of Baton's own origins
 * (lib/host-policy.ts: BATON_URL or loopback, plus BATON_ALLOWED_HOSTS), not merely equal to the
 * request's Host, which a rebinding page chooses. A request without one is refused too (only
 * browsers carry the cookie, and they always send it).
 */
export function originAllowed(headers: IncomingHttpHeaders): boolean {
  return isBatonOrigin(header(headers, "origin"));
}

/** The same checks route({ auth: "user", perm: "sandboxes.write" }) makes, for an upgrade request. */
export async function authorizeRelay(headers: IncomingHttpHeaders): Promise<RelayAuthResult> {
  if (!hostAllowed(header(headers, "host"))) return { ok: false, status: 421, ...HOST_NOT_ALLOWED };
  if (!originAllowed(headers)) {
    return {
      ok: false,
      status: 403,
      code: "bad_origin",
      detail: "This terminal connection came from another site and was refused.",
    };
  }
  const sid = await readSessionId(parseCookieHeader(header(headers, "cookie")));
  const current = sid ? await resolveSession(await getMigratedDb(), sid) : null;
  if (!current)
    return {
      ok: false,
      status: 401,
      code: "unauthorized",
      detail: "You are not signed in, or your session has ended. Sign in again.",
    };
  const team = activeMembership(current);
  if (!team || !can(team.role, "sandboxes.write")) {
    const where = team ? `Your role in ${team.team.name} (${team.role})` : "Without a team, your account";
    return {
      ok: false,
      status: 403,
      code: "forbidden",
      detail: `${where} does not allow opening terminals (sandboxes.write).`,
    };
  }
  return { ok: true, userId: current.user.id };
}

/** Answers an upgrade request with a plain HTTP error (before any WebSocket exists). */
function refuse(socket: Duplex, status: number, code: string, detail: string): void {
  const body = JSON.stringify({ detail, code });
  const reason =
    status === 401
      ? "Unauthorized"
      : status === 403
        ? "Forbidden"
        : status === 404
          ? "Not Found"
          : status === 421
            ? "Misdirected Request"
            : "Error";
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** A WebSocket close reason is at most 123 bytes. */
function closeReason(text: string): string {
  let out = text.replace(/\s+/g, " ").trim();
  while (Buffer.byteLength(out) > 123) out = out.slice(0, -2) + "…";
  return out;
}

/** Close codes that may be sent on (1005/1006/1015 are reserved for "none"/"abnormal"/TLS). */
function forwardableCode(code: number): number {
  return code === 1000 || code === 1001 || (code >= 3000 && code <= 4999) ? code : 1011;
}

function rawToBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

export interface PtyRelayOptions {
  authorize?: (headers: IncomingHttpHeaders) => Promise<RelayAuthResult>;
  /** Where and how to reach the user's orkestr API (default: the vault). */
  upstreamFor?: (userId: string) => Promise<OrkestrUpgradeTarget>;
  log?: (message: string, err?: unknown) => void;
  /** How often both sockets are pinged (tests shorten it). */
  pingMs?: number;
}

export interface PtyRelay {
  /** Handles the upgrade when the path is the relay's and returns true; false leaves it to others. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Open browser connections (tests, shutdown). */
  readonly connections: number;
  close(): void;
}

export function createPtyRelay(options: PtyRelayOptions = {}): PtyRelay {
  const authorize = options.authorize ?? authorizeRelay;
  const upstreamFor = options.upstreamFor ?? ((userId: string) => orkestrUpgradeFor(userId));
  const log =
    options.log ?? ((message: string, err?: unknown) => console.error(`[baton] pty relay: ${message}`, err ?? ""));
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES, perMessageDeflate: false });
  const alive = new WeakMap<WebSocket, boolean>();
  /** Open upstream sockets, each with what to do when it stops answering pings. */
  const upstreams = new Map<WebSocket, () => void>();
  const pinger = setInterval(() => {
    for (const ws of wss.clients) {
      if (alive.get(ws) === false) {
        ws.terminate();
        continue;
      }
      alive.set(ws, false);
      ws.ping();
    }
    // A silently dead upstream would leave the browser "connected" to nothing: drop it, and the
    // browser reconnects (which opens a fresh upstream).
    for (const [ws, onDead] of upstreams) {
      if (ws.readyState !== WebSocket.OPEN) continue; // still opening: the handshake timeout covers it
      if (ws.isPaused) {
        // Held back for a slow browser (flow control): it reads nothing, pongs included, so its
        // silence says nothing. Judged again once it reads.
        alive.set(ws, true);
        continue;
      }
      if (alive.get(ws) === false) {
        onDead();
        continue;
      }
      alive.set(ws, false);
      ws.ping();
    }
  }, options.pingMs ?? PING_MS);
  pinger.unref();

  const handleUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): boolean => {
    const target = matchPtyRelayPath(req.url);
    if (!target) return false;
    socket.on("error", () => undefined);
    void (async () => {
      let auth: RelayAuthResult;
      try {
        auth = await authorize(req.headers);
      } catch (err) {
        log("session check failed", err);
        return refuse(socket, 500, "internal_error", "Could not check your session.");
      }
      if (!auth.ok) return refuse(socket, auth.status, auth.code, auth.detail);
      wss.handleUpgrade(req, socket, head, (browser) => relay(browser, auth.userId, target));
    })();
    return true;
  };

  const relay = (browser: WebSocket, userId: string, target: PtyRelayTarget) => {
    alive.set(browser, true);
    browser.on("pong", () => alive.set(browser, true));
    browser.on("error", () => undefined);
    let upstream: WebSocket | null = null;
    let queued: Array<{ data: Buffer; isBinary: boolean }> | null = [];
    let queuedBytes = 0;

    browser.on("message", (data, isBinary) => {
      const buf = rawToBuffer(data);
      if (!isBinary && buf.length === HEARTBEAT_PING.length && buf.toString("utf8") === HEARTBEAT_PING) {
        browser.send(HEARTBEAT_PONG);
        return;
      }
      if (queued) {
        if (queuedBytes + buf.length <= MAX_QUEUED_BYTES) {
          queued.push({ data: buf, isBinary });
          queuedBytes += buf.length;
        }
        return;
      }
      if (upstream?.readyState === WebSocket.OPEN) upstream.send(buf, { binary: isBinary });
    });
    browser.on("close", () => {
      // The engine keeps the session (and its scrollback) for the next viewer: a detach, not a kill.
      if (upstream && upstream.readyState !== WebSocket.CLOSED) upstream.close(1000, "viewer left");
    });

    const fail = (code: number, detail: string) => {
      if (browser.readyState === WebSocket.OPEN) browser.close(code, closeReason(detail));
    };

    void (async () => {
      let up: OrkestrUpgradeTarget;
      try {
        up = await upstreamFor(userId);
      } catch (err) {
        if (err instanceof VaultError) return fail(4000 + err.status, err.detail);
        log("could not read the connection", err);
        return fail(1011, "Could not read your orkestr connection.");
      }
      if (browser.readyState !== WebSocket.OPEN) return;
      const url = up.baseUrl.replace(/^http/i, "ws") + path`/sandboxes/${target.sandboxId}/pty/${target.ptyId}/ws`;
      const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
      const destination = !up.isLocalEngine && net.isIP(host) ? classifyDestination(host) : null;
      if (destination && destination.kind !== "public") {
        return fail(CLOSE_UPSTREAM_UNREACHABLE, `Refused to connect to ${host}: it is ${destination.label}.`);
      }
      const ws = new WebSocket(url, {
        headers: up.headers,
        perMessageDeflate: false,
        followRedirects: false,
        handshakeTimeout: UPSTREAM_HANDSHAKE_MS,
        maxPayload: 64 * 1024 * 1024,
        // Non-local hosts: the address connected to is the one checked (SSRF), as for HTTP calls.
        ...(up.isLocalEngine ? {} : { lookup: guardedLookupFor() as never }),
      });
      upstream = ws;
      alive.set(ws, true);
      ws.on("pong", () => alive.set(ws, true));
      upstreams.set(ws, () => {
        upstreams.delete(ws);
        fail(CLOSE_UPSTREAM_UNREACHABLE, "The terminal stopped answering.");
        ws.terminate();
      });
      ws.on("unexpected-response", (_req, res) => {
        // The upstream answered the upgrade with an error: pass its detail and status on.
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (body.length < 8192 ? (body += c) : undefined));
        res.on("end", () => {
          const status = res.statusCode ?? 502;
          let detail = `The orkestr API refused the terminal connection (HTTP ${status}).`;
          let upstreamDetail: string | null = null;
          try {
            const parsed = JSON.parse(body) as { detail?: unknown };
            if (typeof parsed.detail === "string" && parsed.detail) upstreamDetail = parsed.detail;
          } catch {
            /* not JSON */
          }
          if (status >= 500) {
            // Its own words on its failure may name its internals: logged, never sent on.
            log(
              `the orkestr API answered the terminal upgrade with ${status}: ${upstreamDetail ?? body.slice(0, 500)}`,
            );
            detail = upstreamFailureDetail({ status, code: "", retryAfterSeconds: null }).replace(
              "this request",
              "this connection",
            );
          } else if (upstreamDetail) {
            detail = upstreamDetail;
          }
          // 401/403 from the upstream are about the connection's token, not the Baton session.
          fail(
            status === 401 || status === 403
              ? 4409
              : status >= 400 && status < 1000
                ? 4000 + status
                : CLOSE_UPSTREAM_UNREACHABLE,
            detail,
          );
        });
        res.on("error", () => fail(CLOSE_UPSTREAM_UNREACHABLE, "The orkestr API refused the terminal connection."));
      });
      ws.on("error", (err) => {
        if (ws.readyState === WebSocket.CONNECTING || !queued) {
          fail(CLOSE_UPSTREAM_UNREACHABLE, `Could not reach the terminal: ${(err as Error).message}`);
        }
      });
      ws.on("open", () => {
        for (const m of queued ?? []) ws.send(m.data, { binary: m.isBinary });
        queued = null;
        queuedBytes = 0;
        if (browser.readyState !== WebSocket.OPEN) ws.close(1000, "viewer left");
      });
      ws.on("message", (data, isBinary) => {
        if (browser.readyState !== WebSocket.OPEN) return;
        browser.send(rawToBuffer(data), { binary: isBinary });
        // Flow control: stop reading the upstream while the browser lags; the engine then stops
        // reading the pty, so the program in the sandbox waits instead of memory filling up.
        if (browser.bufferedAmount > HIGH_WATER && !ws.isPaused) {
          ws.pause();
          const check = setInterval(() => {
            if (browser.readyState !== WebSocket.OPEN || browser.bufferedAmount < LOW_WATER) {
              clearInterval(check);
              ws.resume();
            }
          }, 20);
        }
      });
      ws.on("close", (code, reason) => {
        upstreams.delete(ws);
        if (browser.readyState === WebSocket.OPEN)
          browser.close(forwardableCode(code), closeReason(reason.toString("utf8")));
      });
    })();
  };

  return {
    handleUpgrade,
    get connections() {
      return wss.clients.size;
    },
    close() {
      clearInterval(pinger);
      for (const ws of wss.clients) ws.close(1001, "server shutting down");
      wss.close();
    },
  };
}
