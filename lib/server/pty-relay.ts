import "server-only";
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import net from "node:net";
import type { Duplex } from "node:stream";
import { WebSocket, WebSocketServer, type RawData } from "ws";
import { path } from "../orkestr/path";
import { HOST_NOT_ALLOWED, hostAllowed, originAllowed as isBatonOrigin } from "../host-policy";
import {
  ACCESS_RECHECK,
  accessLost,
  openedWith,
  sessionEnded,
  type AccessLoss,
  type AccessLossCode,
  type OpenedWith,
} from "./access-watch";
import type { ActingTeam } from "./acting-team";
import { actingTeam, refusal, resolveSession } from "./auth";
import { TeamNotFoundError } from "./acting-team";
import { LAST_TEAM_COOKIE, readTeamParam } from "../team-param";
import { getMigratedDb } from "./db/index";
import { HEARTBEAT_PING, HEARTBEAT_PONG } from "../terminal-heartbeat";
import { upstreamFailureDetail } from "./errors";
import { actingCan } from "./rbac";
import { bearerOf, resolveBearer } from "./api-tokens/bearer";
import { AppError } from "./errors";
import { contractReason } from "./v1-contract-errors";
import { clientIp } from "./request-info";
import { parseCookieHeader, readSessionId } from "./session-cookie";
import { classifyDestination, guardedLookupFor } from "./ssrf";
import { orkestrUpgradeFor, VaultError, type OrkestrUpgradeTarget } from "./tokens";

// The terminal WebSocket relay. Next.js route handlers cannot accept a WebSocket upgrade, and a
// browser cannot put the orkestr token on a WebSocket (nor may it ever see it), so the console's own
// server (scripts/console-server.mjs) hands upgrade requests for
//   /api/v1/sandboxes/{id}/pty/{pid}/ws
// to this module. It does what route() does for HTTP: Host and Origin checks, the Baton session (cookie →
// sessions row), the `sandboxes.write` permission in the team the request acts in; then it opens the
// upstream PTY WebSocket with the token of that team's connection from the vault and pipes frames
// both ways, unchanged (binary = terminal bytes, text = JSON control messages). Nothing of the
// upstream handshake reaches the browser.
//
// A terminal stays open for hours, so the permission is not only checked once: every
// ACCESS_RECHECK.terminalMs the relay reads the session again from the database (no cache in
// between) and asks whether the user is still signed in and not disabled, still a member of the
// team with a role that allows terminals, and the connection still the same (not removed, its
// engine token not revoked or replaced). When not, the browser's input stops at once and its socket
// closes with a code (CLOSE_FOR_LOSS) and a sentence saying what happened.

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
/** The close code when what allowed the terminal is gone (the browser shows the reason, and does not reconnect). */
export const CLOSE_FOR_LOSS: Record<AccessLossCode, number> = {
  session_ended: 4401,
  removed_from_team: 4403,
  role_changed: 4403,
  connection_changed: CLOSE_NO_CONNECTION,
};

export interface PtyRelayTarget {
  sandboxId: string;
  ptyId: string;
}

/** The sandbox and session an upgrade request is for, or null when the path is not the relay's. */
export function matchPtyRelayPath(url: string | undefined): PtyRelayTarget | null {
  const m = PTY_RELAY_PATH.exec((url ?? "").split("?")[0]!);
  return m ? { sandboxId: m[1]!, ptyId: m[2]! } : null;
}

/** What an accepted upgrade carries on to the relay: whose session, and the team and connection it acts with. */
export interface RelayGrant {
  userId: string;
  /** The session cookie's token: the relay reads the session with it again while the terminal is open. */
  sid: string | null;
  /**
   * Or the API token (`Authorization: Bearer bat_…`, the orkestr SDK's terminal): resolved again
   * while the terminal is open, as route() does for a stream, so a revocation ends it.
   */
  bearer?: { token: string; request: Request } | null;
  team: ActingTeam;
}

export type RelayAuthResult =
  | ({ ok: true } & RelayGrant)
  | { ok: false; status: 401 | 403 | 404 | 421 | 429; code: string; detail: string; reason?: string };

/** The upgrade as a Request, for what route() reads of one (the token, X-Baton-Team, `?team=`). */
function upgradeRequest(headers: IncomingHttpHeaders, url: string | undefined): Request {
  const h = new Headers();
  for (const name of ["authorization", "x-baton-team"]) {
    const v = header(headers, name);
    if (v !== null) h.set(name, v);
  }
  return new Request(new URL(url ?? "/", "http://relay.invalid"), { headers: h });
}

/**
 * An upgrade with `Authorization: Bearer …` (the SDK; a browser cannot put a header on a WebSocket):
 * the same resolution as route()'s for /api/v1 (lib/server/api-tokens/bearer.ts): the token's team
 * only, its role narrowed by its scope, no cookie read and so no Origin check.
 */
async function authorizeBearer(
  headers: IncomingHttpHeaders,
  url: string | undefined,
  token: string,
): Promise<RelayAuthResult> {
  const request = upgradeRequest(headers, url);
  try {
    const { current, team } = await resolveBearer(await getMigratedDb(), request, token, clientIp(headers));
    if (!actingCan(team, TERMINAL_PERMISSION))
      return { ok: false, status: 403, code: "forbidden", detail: refusal(team, TERMINAL_PERMISSION) };
    return { ok: true, userId: current.user.id, sid: null, bearer: { token, request }, team };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    const status = err.status === 429 ? 429 : err.status === 403 ? 403 : 401;
    // The v1 contract's code for a refused credential, with its reason (lib/server/v1-contract-errors.ts).
    const reason = contractReason(err.code);
    return reason
      ? { ok: false, status, code: "unauthorized", reason, detail: err.message }
      : { ok: false, status, code: err.code, detail: err.message };
  }
}

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
export async function authorizeRelay(headers: IncomingHttpHeaders, url?: string): Promise<RelayAuthResult> {
  if (!hostAllowed(header(headers, "host"))) return { ok: false, status: 421, ...HOST_NOT_ALLOWED };
  const bearer = bearerOf(upgradeRequest(headers, url));
  if (bearer !== null) return authorizeBearer(headers, url, bearer);
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
  if (!sid || !current)
    return {
      ok: false,
      status: 401,
      code: "unauthorized",
      detail: "You are not signed in, or your session has ended. Sign in again.",
    };
  // The same resolution as route()'s: the role checked and the connection used are one team's.
  // The tab's team rides in the WebSocket URL's `?team=` (a browser WebSocket sends no custom header).
  const cookieList = parseCookieHeader(header(headers, "cookie"));
  let team: ActingTeam | null;
  try {
    team = actingTeam(current, {
      slug: readTeamParam(url ?? null),
      lastSlug: cookieList.find((c) => c.name === LAST_TEAM_COOKIE)?.value ?? null,
    });
  } catch (err) {
    if (!(err instanceof TeamNotFoundError)) throw err;
    return { ok: false, status: 404, code: "team_not_found", detail: err.detail };
  }
  if (!team || !actingCan(team, TERMINAL_PERMISSION)) {
    return { ok: false, status: 403, code: "forbidden", detail: refusal(team, TERMINAL_PERMISSION) };
  }
  return { ok: true, userId: current.user.id, sid, team };
}

const TERMINAL_PERMISSION = "sandboxes.write" as const;

/**
 * Whether the terminal opened with `grant` may go on: the session read again from the database
 * (a sign-out, a sign-out everywhere, expiry, a disabled or deleted user end it), then the team,
 * the role and the connection it opened with (lib/server/access-watch.ts). Null while it may.
 */
export async function revalidateRelay(grant: RelayGrant, opened: OpenedWith): Promise<AccessLoss | null> {
  const db = await getMigratedDb();
  const current = grant.bearer
    ? await resolveBearer(db, grant.bearer.request, grant.bearer.token, null, { recheck: true }).then(
        (p) => p.current,
        () => null,
      )
    : grant.sid
      ? await resolveSession(db, grant.sid)
      : null;
  if (!current || current.user.id !== grant.userId) return sessionEnded(db, grant.userId);
  return accessLost(current, opened);
}

/** The upgrade target of the grant's connection: the acting team's, never another. */
function upstreamOf(grant: RelayGrant): Promise<OrkestrUpgradeTarget> {
  const connection = grant.team.connection;
  if (!connection) {
    return Promise.reject(
      new VaultError("no_connection", grant.team.noConnection ?? "You have no orkestr connection for this team."),
    );
  }
  return orkestrUpgradeFor(grant.userId, { connectionId: connection.id });
}

/** Answers an upgrade request with a plain HTTP error (before any WebSocket exists). */
function refuse(socket: Duplex, status: number, code: string, detail: string, why?: string): void {
  const body = JSON.stringify(why ? { detail, code, reason: why } : { detail, code });
  const reason =
    status === 401
      ? "Unauthorized"
      : status === 429
        ? "Too Many Requests"
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
  authorize?: (headers: IncomingHttpHeaders, url?: string) => Promise<RelayAuthResult>;
  /** Where and how to reach the grant's orkestr API (default: the vault, the acting team's connection). */
  upstreamFor?: (grant: RelayGrant) => Promise<OrkestrUpgradeTarget>;
  /** Whether an open terminal may go on (default: revalidateRelay, every ACCESS_RECHECK.terminalMs). */
  revalidate?: (grant: RelayGrant, opened: OpenedWith) => Promise<AccessLoss | null>;
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
  const upstreamFor = options.upstreamFor ?? upstreamOf;
  const revalidate = options.revalidate ?? revalidateRelay;
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
        auth = await authorize(req.headers, req.url);
      } catch (err) {
        log("session check failed", err);
        return refuse(socket, 500, "internal_error", "Could not check your session.");
      }
      if (!auth.ok) return refuse(socket, auth.status, auth.code, auth.detail, auth.reason);
      const { ok: _ok, ...grant } = auth;
      wss.handleUpgrade(req, socket, head, (browser) => relay(browser, grant, target));
    })();
    return true;
  };

  const relay = (browser: WebSocket, grant: RelayGrant, target: PtyRelayTarget) => {
    alive.set(browser, true);
    browser.on("pong", () => alive.set(browser, true));
    browser.on("error", () => undefined);
    let upstream: WebSocket | null = null;
    let queued: Array<{ data: Buffer; isBinary: boolean }> | null = [];
    let queuedBytes = 0;
    /** Set when what allowed the terminal is gone: nothing the browser sends goes on from then. */
    let lost: AccessLoss | null = null;
    const fail = (code: number, detail: string) => {
      if (browser.readyState === WebSocket.OPEN) browser.close(code, closeReason(detail));
    };

    const opened = openedWith(grant.team, TERMINAL_PERMISSION, "terminal");
    const watch = setInterval(() => {
      revalidate(grant, opened).then(
        (loss) => {
          if (!loss || lost) return;
          lost = loss;
          clearInterval(watch);
          queued = [];
          // The engine keeps the session for a viewer who may still attach; this one leaves.
          if (upstream && upstream.readyState !== WebSocket.CLOSED) upstream.close(1000, "viewer lost access");
          fail(CLOSE_FOR_LOSS[loss.code], loss.detail);
        },
        (err: unknown) => log("could not check the terminal's session again", err), // asked again next tick
      );
    }, ACCESS_RECHECK.terminalMs);
    watch.unref();

    browser.on("message", (data, isBinary) => {
      if (lost) return;
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
      clearInterval(watch);
      // The engine keeps the session (and its scrollback) for the next viewer: a detach, not a kill.
      if (upstream && upstream.readyState !== WebSocket.CLOSED) upstream.close(1000, "viewer left");
    });

    void (async () => {
      let up: OrkestrUpgradeTarget;
      try {
        up = await upstreamFor(grant);
      } catch (err) {
        if (err instanceof VaultError) return fail(4000 + err.status, err.detail);
        log("could not read the connection", err);
        return fail(1011, "Could not read your orkestr connection.");
      }
      if (browser.readyState !== WebSocket.OPEN || lost) return;
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
        if (lost) return void ws.close(1000, "viewer lost access");
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
