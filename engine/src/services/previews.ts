import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { EngineConfig } from "../config.js";
import { ApiError } from "../errors.js";
import { newSecret } from "../lib/ids.js";
import { previewHost, type PreviewHostMatch } from "../lib/preview-host.js";
import { findListener, PreviewRelay, type ListenTarget } from "../runtime/preview-relay.js";
import type { SandboxProcess } from "../runtime/sandbox-proc.js";
import type { Db } from "../store/db.js";
import type { EventLog } from "./events.js";
import type { SandboxService } from "./sandboxes.js";

type SandboxRow = ReturnType<SandboxService["getRow"]>;

/** Where a preview_auth token may travel (POST /v1/sandboxes with `preview_auth`, field `preview_auth_token`). */
export const PREVIEW_TOKEN_HEADER = "x-orkestr-preview-token";
export const PREVIEW_TOKEN_QUERY = "orkestr_token";
/** Set after a valid ?orkestr_token= hit; holds an HMAC, never the token itself. */
export const PREVIEW_COOKIE = "orkestr_preview";
/**
 * The same HMAC as a SameSite=Lax cookie, for top-level visits in browsers that refuse Secure
 * cookies over plain http (the engine serves previews on http://*.sbx.localhost). Chromium and
 * Firefox treat *.localhost as a secure context and use PREVIEW_COOKIE.
 */
export const PREVIEW_COOKIE_LAX = "orkestr_preview_lax";

/**
 * The preview cookie's attributes. A console embeds previews in an iframe, and the console's origin
 * (e.g. http://127.0.0.1:3000) is cross-site to *.sbx.localhost: a SameSite=Lax cookie is neither
 * stored nor sent there, so the iframe would answer 401 right after the token redirect. SameSite=None
 * needs Secure (accepted on http://*.localhost, a secure context); Partitioned (CHIPS) keeps the
 * cookie working where third-party cookies are blocked, keyed to the embedding site, so it is no
 * cross-site tracking handle either.
 */
export const PREVIEW_COOKIE_ATTRS = "Path=/; HttpOnly; Secure; SameSite=None; Partitioned";
const PREVIEW_COOKIE_LAX_ATTRS = "Path=/; HttpOnly; SameSite=Lax";

/** How long a request to a paused auto_resume sandbox is held while it wakes. */
export const WAKE_HOLD_MS = 30_000;
/** Ports one sandbox may have relays for at once; the least recently used one makes room. */
export const MAX_RELAYS_PER_SANDBOX = 16;

export interface PreviewDescription {
  port: number;
  host: string;
  url: string;
  auth_required: boolean;
  /** Baton extension: whether a server listens on the port now (null unless the sandbox runs). */
  listening: boolean | null;
}

export type PreviewAuth =
  | { kind: "allowed" }
  | { kind: "denied" }
  /** A valid ?orkestr_token= on a page load: set the cookie and redirect to the URL without it. */
  | { kind: "redirect"; location: string; cookies: string[] };

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

function decodeQueryPart(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, " "));
  } catch {
    return s;
  }
}

/**
 * Splits ?orkestr_token= out of a request target, leaving every other byte of it as sent (the
 * server in the sandbox must see its own paths and queries unnormalized).
 */
export function takeTokenParam(target: string): { target: string; token: string | null } {
  const q = target.indexOf("?");
  if (q < 0) return { target, token: null };
  let token: string | null = null;
  const kept: string[] = [];
  for (const part of target.slice(q + 1).split("&")) {
    const eq = part.indexOf("=");
    if (decodeQueryPart(eq < 0 ? part : part.slice(0, eq)) === PREVIEW_TOKEN_QUERY) {
      token ??= decodeQueryPart(eq < 0 ? "" : part.slice(eq + 1));
      continue;
    }
    kept.push(part);
  }
  return { target: kept.length ? `${target.slice(0, q)}?${kept.join("&")}` : target.slice(0, q), token };
}

/** The value of one cookie in a Cookie header, or null. */
export function readCookie(header: string | undefined, name: string): string | null {
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/** A Cookie header without our cookie (null when nothing else is left). */
export function withoutCookie(header: string, name: string): string | null {
  const kept = header.split(";").filter((p) => p.slice(0, Math.max(0, p.indexOf("="))).trim() !== name);
  const joined = kept
    .map((p) => p.trim())
    .filter(Boolean)
    .join("; ");
  return joined || null;
}

/**
 * Preview URLs (GET /v1/sandboxes/:id/previews/:port): which sandbox and port a preview host means, whether the request
 * may pass (preview_auth), waking a paused auto_resume sandbox, and the per-port relays into the
 * sandbox's network namespace. The HTTP side lives in preview-proxy.ts.
 *
 * Pause keeps the relays: they sit in the sandbox's cgroups, freeze with it and cost nothing while
 * frozen. Connections open at pause time stall and carry on after resume (a dev server's HMR
 * socket survives); new requests get 409 sandbox_paused or wake it (auto_resume). Terminate,
 * expiry, failure and engine shutdown kill the relays with the sandbox's processes and remove
 * their sockets (release hook below).
 */
export class PreviewService {
  /** sandbox id → port → relay. */
  private relays = new Map<string, Map<number, PreviewRelay>>();
  private starting = new Map<string, Promise<PreviewRelay>>();
  private wakes = new Map<string, Promise<unknown>>();

  constructor(
    private readonly config: EngineConfig,
    private readonly db: Db,
    private readonly sandboxes: SandboxService,
    private readonly events: EventLog,
    private readonly signingKey: Buffer,
  ) {
    sandboxes.onRelease((id) => this.releaseSandbox(id));
  }

  get allowed(): boolean {
    return this.sandboxes.plan.previewsAllowed;
  }

  private checkPlan(): void {
    if (!this.allowed) {
      throw new ApiError("plan_limit", `Preview URLs need a paid plan; the ${this.sandboxes.plan.name} plan has none`);
    }
  }

  /** The checks every preview use shares: plan, sandbox state, network mode. */
  private checkPreviewable(row: SandboxRow): void {
    this.checkPlan();
    if (row.status === "terminated" || row.status === "expired") {
      throw new ApiError("sandbox_terminated", `Sandbox ${row.id} was terminated; its previews are gone`);
    }
    if (row.status === "failed")
      throw new ApiError("sandbox_not_running", `Sandbox ${row.id} failed: ${row.status_reason ?? "unknown reason"}`);
    if (row.network === "off") {
      throw new ApiError(
        "network_off",
        `Sandbox ${row.id} was created with network "off": it has no port to expose. Create it with network "restricted" or "open" for previews.`,
      );
    }
  }

  /** GET /v1/sandboxes/{id}/previews/{port} */
  describe(account: string, id: string, port: number): PreviewDescription {
    const row = this.sandboxes.getRow(account, id);
    this.checkPreviewable(row);
    const host = previewHost(row.id, port, this.config.port);
    const proc = row.status === "running" ? this.sandboxes.process(row.id) : undefined;
    return {
      port,
      host,
      url: `http://${host}`,
      auth_required: !!row.preview_auth,
      listening: proc ? findListener(proc.targetPid, port) !== null : null,
    };
  }

  /** POST /v1/sandboxes/{id}/preview-token: a new token; the old one and its cookies stop working. */
  rotateToken(account: string, id: string): { preview_auth_token: string } {
    const row = this.sandboxes.getRow(account, id);
    this.checkPreviewable(row);
    if (!row.preview_auth) {
      throw new ApiError(
        "preview_auth_disabled",
        `Sandbox ${row.id} was created without preview_auth: its previews are public and have no token to rotate`,
      );
    }
    const token = newSecret("pvt", 24);
    this.db.prepare("UPDATE sandboxes SET preview_token_hash=? WHERE id=?").run(sha256(token), row.id);
    this.events.record(row.id, "preview.token_rotated", {});
    return { preview_auth_token: token };
  }

  /** The sandbox a preview host names; anything unknown is one 404, whatever the reason. */
  lookup(match: PreviewHostMatch): SandboxRow {
    // The preview host names the sandbox itself (its id is the capability, as on orkestr), so this
    // is the one lookup that is not scoped by an account; preview_auth guards private previews.
    const row = match.kind === "preview" ? this.sandboxes.rowUnscoped(match.sandboxId) : undefined;
    if (!row) throw new ApiError("sandbox_not_found", "No sandbox serves this preview host");
    this.checkPlan();
    return row;
  }

  private cookieFor(row: SandboxRow, port: number): string {
    // Bound to the sandbox, the port (so to this host) and the current token: rotating it voids every cookie.
    return createHmac("sha256", this.signingKey)
      .update(`preview-cookie\n${row.id}\n${port}\n${row.preview_token_hash ?? ""}`)
      .digest("base64url");
  }

  private tokenValid(row: SandboxRow, token: string | null | undefined): boolean {
    if (!token || !row.preview_token_hash) return false;
    return sameBytes(Buffer.from(sha256(token), "hex"), Buffer.from(row.preview_token_hash, "hex"));
  }

  /**
   * preview_auth: the token in X-Orkestr-Preview-Token, or the cookie a first ?orkestr_token= hit
   * set. That query form, on a page load (GET/HEAD, no upgrade), becomes a redirect setting the
   * cookie; on anything else it simply authorizes the request.
   */
  authorize(
    row: SandboxRow,
    port: number,
    req: IncomingMessage,
    target: string,
    queryToken: string | null,
  ): PreviewAuth {
    if (!row.preview_auth) return { kind: "allowed" };
    const header = req.headers[PREVIEW_TOKEN_HEADER];
    if (this.tokenValid(row, Array.isArray(header) ? header[0] : header)) return { kind: "allowed" };
    const expected = Buffer.from(this.cookieFor(row, port));
    for (const name of [PREVIEW_COOKIE, PREVIEW_COOKIE_LAX]) {
      const cookie = readCookie(req.headers.cookie, name);
      if (cookie && sameBytes(Buffer.from(cookie), expected)) return { kind: "allowed" };
    }
    if (!this.tokenValid(row, queryToken)) return { kind: "denied" };
    const pageLoad = (req.method === "GET" || req.method === "HEAD") && !req.headers.upgrade;
    if (!pageLoad) return { kind: "allowed" };
    // "//host/x" would be read as another host: "/.//host/x" is the same path on this one.
    const location = /^\/[/\\]/.test(target) ? `/.${target}` : target;
    const value = this.cookieFor(row, port);
    return {
      kind: "redirect",
      location,
      cookies: [
        `${PREVIEW_COOKIE}=${value}; ${PREVIEW_COOKIE_ATTRS}`,
        `${PREVIEW_COOKIE_LAX}=${value}; ${PREVIEW_COOKIE_LAX_ATTRS}`,
      ],
    };
  }

  /**
   * A relay to `port` of a running sandbox: a paused auto_resume sandbox is woken first (the
   * request held up to 30 s), a paused one without is 409, and nothing listening is 502.
   */
  async connect(row: SandboxRow, port: number): Promise<PreviewRelay> {
    this.checkPreviewable(row);
    const { live } = await this.ensureRunning(row);
    const proc = live.proc;
    // Reading a netns's socket table costs milliseconds (the kernel walks host-wide tables), so
    // only a port's first request looks; later ones go straight to its relay, and a failed
    // connection is diagnosed afterwards (upstreamFailure).
    const existing = this.relays.get(row.id)?.get(port);
    if (existing?.alive) {
      existing.lastUsed = Date.now();
      return existing;
    }
    const target = findListener(proc.targetPid, port);
    if (!target) throw notListening(row.id, port);
    return this.relayFor(row.id, proc, port, target);
  }

  /**
   * Why a connection through a relay failed before any answer: a refused connection and a server
   * that hung up look alike on the relay, so the socket table decides. A relay still dialing an
   * address the server has left (say it moved from 127.0.0.1 to ::1) is dropped for the next request.
   */
  upstreamFailure(id: string, port: number, relay: PreviewRelay, cause: Error): ApiError {
    const proc = this.sandboxes.process(id);
    if (!proc) return new ApiError("sandbox_not_running", `Sandbox ${id} stopped while this request was in flight`);
    const now = findListener(proc.targetPid, port);
    if (!now) return notListening(id, port);
    if (now.family !== relay.target.family || now.address !== relay.target.address) {
      const mine = this.relays.get(id);
      if (mine?.get(port) === relay) mine.delete(port);
      void relay.close();
    }
    return ApiError.internal(
      `The server on port ${port} inside sandbox ${id} closed the connection without an answer; reload to retry`,
      cause,
      "preview_upstream_error",
    );
  }

  private ensureRunning(row: SandboxRow): ReturnType<SandboxService["running"]> {
    if (row.status !== "paused" || !row.auto_resume) return this.sandboxes.runningRow(row);
    // A page load fires many requests at once: they share one wake.
    let wake = this.wakes.get(row.id) as ReturnType<SandboxService["running"]> | undefined;
    if (!wake) {
      wake = this.sandboxes.runningRow(row).finally(() => this.wakes.delete(row.id));
      this.wakes.set(row.id, wake);
    }
    let timer: NodeJS.Timeout | undefined;
    const held = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(new ApiError("upstream_timeout", `Sandbox ${row.id} did not wake within ${WAKE_HOLD_MS / 1000} s`)),
        WAKE_HOLD_MS,
      );
    });
    return Promise.race([wake, held]).finally(() => clearTimeout(timer));
  }

  /** The port's relay, started once however many requests ask for it at the same time. */
  private relayFor(id: string, proc: SandboxProcess, port: number, target: ListenTarget): Promise<PreviewRelay> {
    const pendingKey = `${id}|${port}`;
    let pending = this.starting.get(pendingKey);
    if (!pending) {
      pending = this.startRelay(id, proc, port, target).finally(() => this.starting.delete(pendingKey));
      this.starting.set(pendingKey, pending);
    }
    return pending;
  }

  private async startRelay(
    id: string,
    proc: SandboxProcess,
    port: number,
    target: ListenTarget,
  ): Promise<PreviewRelay> {
    let relay: PreviewRelay;
    try {
      const dir = await PreviewRelay.ensureDir(proc.spec.dir, proc.spec.uid);
      relay = await PreviewRelay.start(proc, dir, port, target);
    } catch (e) {
      if (this.sandboxes.process(id) !== proc)
        throw new ApiError("sandbox_not_running", `Sandbox ${id} stopped while its preview was being set up`);
      throw ApiError.internal(`Could not reach port ${port} inside sandbox ${id}`, e, "sandbox_agent_unreachable");
    }
    // Released (terminated) while the relay started: it must not outlive the sandbox.
    if (this.sandboxes.process(id) !== proc) {
      await relay.close();
      throw new ApiError("sandbox_not_running", `Sandbox ${id} stopped while its preview was being set up`);
    }
    let mine = this.relays.get(id);
    if (!mine) this.relays.set(id, (mine = new Map()));
    const set = mine;
    void set.get(port)?.retire();
    set.set(port, relay);
    relay.onExit(() => {
      if (set.get(port) === relay) set.delete(port);
      void relay.close();
    });
    if (set.size > MAX_RELAYS_PER_SANDBOX) {
      const [oldestPort, oldest] = [...set]
        .filter(([, r]) => r !== relay)
        .sort((a, b) => a[1].lastUsed - b[1].lastUsed)[0]!;
      set.delete(oldestPort);
      void oldest.retire();
    }
    return relay;
  }

  /** Called by SandboxService once a sandbox's processes are gone (terminate, expiry, failure, shutdown). */
  private async releaseSandbox(id: string): Promise<void> {
    const mine = this.relays.get(id);
    this.relays.delete(id);
    if (mine) await Promise.all([...mine.values()].map((r) => r.close()));
  }

  /** Relays still running for a sandbox (tests and diagnostics). */
  relayCount(id: string): number {
    return this.relays.get(id)?.size ?? 0;
  }
}

function notListening(id: string, port: number): ApiError {
  return new ApiError(
    "port_not_listening",
    `Nothing is listening on port ${port} inside sandbox ${id}. Start a server there (bound to 127.0.0.1 or 0.0.0.0) and reload.`,
  );
}
