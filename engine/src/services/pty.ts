import fs from "node:fs";
import type { EngineContext } from "../context.js";
import { ApiError } from "../errors.js";
import { holderSocket, holdersDir, procStartTime, sameProcess } from "../runtime/holder.js";
import { HeldPty, listPtyRecords, removePtyRecord, writePtyRecord, type PtyRecord } from "./pty/held.js";
import {
  buildSpawn,
  PtySession,
  spawnNodePty,
  type PtyExitReason,
  type PtyOpenRequest,
  type PtyView,
  type TerminalIo,
} from "./pty/session.js";
import { newId } from "../lib/ids.js";

export {
  normalizeSignal,
  PTY_MAX_COLS,
  PTY_MAX_ROWS,
  PTY_SCROLLBACK_BYTES,
  PTY_SIGNALS,
  PtySession,
  type PtyExitReason,
  type PtyOpenRequest,
  type PtySignal,
  type PtyView,
} from "./pty/session.js";

/**
 * Interactive terminals (a Baton extension to the contract, advertised as capabilities.pty):
 * a process inside the sandbox on a real pseudo-terminal, viewed and driven over WebSockets.
 * This module is the registry (limits, lookups, liveness, shutdown); one terminal is
 * pty/session.ts, and what it reads of /proc is pty/procfs.ts.
 */

/** Open sessions a sandbox may hold at once (429 rate_limited beyond). */
export const PTY_MAX_PER_SANDBOX = 16;
/** A session nobody has watched for this long is killed. */
export const PTY_IDLE_MS = 10 * 60_000;
/** An exited session stays readable (scrollback + exit frame) this long, so a late viewer sees how it ended. */
const LINGER_MS = 60_000;
/** How often sessions check that their sandbox still exists (SandboxService has no hook for it). */
const POLL_MS = 2_000;
/** Viewer keepalive: a viewer that misses a whole period of pongs is dropped. */
const PING_MS = 30_000;
/** Cap on the environment a session starts with (argv + envp share a few MiB). */
export const PTY_MAX_ENV_BYTES = 1024 * 1024;

export interface PtyOptions {
  idleMs: number;
}

export class PtyService {
  private sessions = new Map<string, PtySession>();
  private poller: NodeJS.Timeout | null = null;
  private pinger: NodeJS.Timeout | null = null;
  private closing = false;
  private readonly opts: PtyOptions;
  /** `script` from util-linux (the sandbox sees the host's /usr) gives sessions a pty of their own devpts. */
  private readonly relay = fs.existsSync("/usr/bin/script");
  private readonly closeFds = fs.existsSync("/bin/bash");

  constructor(
    /** What terminals need of the engine: sandbox lookups and the event log. */
    private readonly ctx: Pick<EngineContext, "sandboxes" | "events" | "host">,
    opts: Partial<PtyOptions> = {},
  ) {
    this.opts = { idleMs: PTY_IDLE_MS, ...opts };
  }

  async open(account: string, sandboxId: string, req: PtyOpenRequest): Promise<PtySession> {
    if (this.closing) throw new ApiError("fleet_full", "The engine is shutting down", {}, { "Retry-After": "5" });
    // Same gate as exec: paused sandboxes fail (or auto-resume), gone ones are 404/410.
    const { row, live } = await this.ctx.sandboxes.running(account, sandboxId);
    const envBytes = Object.entries({ ...live.proc.spec.env, ...req.env }).reduce(
      (n, [k, v]) => n + k.length + Buffer.byteLength(v) + 2,
      0,
    );
    if (envBytes > PTY_MAX_ENV_BYTES)
      throw new ApiError("validation_error", [
        {
          loc: ["body", "env"],
          msg: `the session's environment may total at most ${PTY_MAX_ENV_BYTES} bytes`,
          type: "too_big",
        },
      ]);
    const open = this.forSandbox(row.id).filter((s) => s.status === "running").length;
    if (open >= PTY_MAX_PER_SANDBOX) {
      throw new ApiError(
        "rate_limited",
        `Sandbox ${row.id} already has ${open} open PTY sessions (at most ${PTY_MAX_PER_SANDBOX}); close one first`,
        { max_sessions: PTY_MAX_PER_SANDBOX },
        { "Retry-After": "5" },
      );
    }
    let session: PtySession;
    let record: PtyRecord | null = null;
    const id = newId("pty");
    const createdAt = Date.now();
    const holder = live.proc.survivesEngine ? this.ctx.host.holder : null;
    try {
      const spec = buildSpawn(live.proc, req, this.relay, this.closeFds);
      // Held by its own holder (pty/held.ts), the terminal outlives an engine restart like its sandbox.
      let io: TerminalIo;
      if (holder) {
        const held = await HeldPty.spawn(holder.bin, holderSocket(holder.root, id), spec, req.cols, req.rows);
        record = {
          v: 1,
          id,
          sandboxId: row.id,
          holderPid: held.holderPid,
          holderStart: procStartTime(held.holderPid) ?? "",
          childPid: held.pid,
          command: req.command,
          cwd: req.cwd,
          cols: req.cols,
          rows: req.rows,
          createdAt,
          relay: this.relay,
        };
        writePtyRecord(holdersDir(holder.root), record);
        io = held;
      } else io = spawnNodePty(spec, req.cols, req.rows);
      session = new PtySession(
        row.id,
        live.proc,
        req.command,
        req.cwd,
        req,
        this.relay,
        this.opts.idleMs,
        io,
        (s, reason) => this.onSessionExit(s, reason),
        { id, createdAt, adopted: false },
      );
    } catch (e) {
      if (holder) removePtyRecord(holdersDir(holder.root), id);
      throw ApiError.internal("Could not start a terminal in the sandbox", e, "sandbox_agent_unreachable");
    }
    if (holder && record) this.keepSizeRecorded(session, holdersDir(holder.root), record);
    this.sessions.set(session.id, session);
    this.record(row.id, "pty.open", {
      pty_id: session.id,
      command: req.command.slice(0, 1000),
      cols: req.cols,
      rows: req.rows,
    });
    this.startTimers();
    return session;
  }

  /**
   * After a restart: every terminal whose holder still runs, in a sandbox the engine adopted, is
   * taken over with its scrollback (the holder replays it). The holder must be the recorded process
   * (pid and start time) and answer with the recorded session leader. Others are forgotten: their
   * sandbox failed (its cgroup's teardown ended them) or they ended while the engine was down.
   */
  async adoptAfterRestart(): Promise<number> {
    const holder = this.ctx.host.holder;
    if (!holder) return 0;
    const dir = holdersDir(holder.root);
    let adopted = 0;
    for (const rec of listPtyRecords(dir)) {
      const proc = this.ctx.sandboxes.process(rec.sandboxId);
      const io =
        proc && sameProcess(rec.holderPid, rec.holderStart)
          ? await HeldPty.connect(holderSocket(holder.root, rec.id)).catch(() => null)
          : null;
      if (!proc || !io || io.holderPid !== rec.holderPid || io.pid !== rec.childPid) {
        io?.detach();
        // A holder that is still the recorded process but could not be taken over (no answer in
        // time, another session leader) would keep a shell in the sandbox that nothing can reach
        // or end: it is ended (closing its terminal hangs the shell up) before its record goes.
        if (sameProcess(rec.holderPid, rec.holderStart)) {
          try {
            process.kill(rec.holderPid, "SIGKILL");
          } catch {
            // gone meanwhile
          }
        }
        removePtyRecord(dir, rec.id);
        continue;
      }
      const session = new PtySession(
        rec.sandboxId,
        proc,
        rec.command,
        rec.cwd,
        { cols: rec.cols, rows: rec.rows },
        rec.relay,
        this.opts.idleMs,
        io,
        (s, reason) => this.onSessionExit(s, reason),
        { id: rec.id, createdAt: rec.createdAt, adopted: true },
      );
      this.keepSizeRecorded(session, dir, rec);
      this.sessions.set(session.id, session);
      adopted++;
    }
    if (adopted) this.startTimers();
    return adopted;
  }

  /** A held terminal's record follows its size, so a restarted engine reports the size it has. */
  private keepSizeRecorded(session: PtySession, dir: string, rec: PtyRecord): void {
    session.onResize = (cols, rows) => {
      if (session.status === "running") writePtyRecord(dir, { ...rec, cols, rows });
    };
  }

  forSandbox(sandboxId: string): PtySession[] {
    return [...this.sessions.values()].filter((s) => s.sandboxId === sandboxId);
  }

  /** A session of this sandbox (404 sandbox_not_found / session_not_found otherwise). */
  get(account: string, sandboxId: string, ptyId: string): PtySession {
    const row = this.ctx.sandboxes.getRow(account, sandboxId);
    const s =
      this.sessions.get(ptyId) ?? [...this.sessions.values()].find((x) => x.id.toLowerCase() === ptyId.toLowerCase());
    if (!s || s.sandboxId !== row.id)
      throw new ApiError("session_not_found", `PTY session ${ptyId} not found in sandbox ${row.id}`);
    return s;
  }

  list(account: string, sandboxId: string): PtyView[] {
    const row = this.ctx.sandboxes.getRow(account, sandboxId);
    return this.forSandbox(row.id).map((s) => s.view());
  }

  /** DELETE: kill and forget (an exited session just goes). */
  close(session: PtySession): void {
    if (session.status === "running") session.kill("killed");
    else this.forget(session);
  }

  private onSessionExit(s: PtySession, reason: PtyExitReason): void {
    // release() drops the sandbox's live state before it kills the cgroup, so this is already
    // true when the kill reaches the session (the row still says running at that point).
    const why = reason === "exited" && !this.ctx.sandboxes.meter(s.sandboxId) ? "sandbox_gone" : reason;
    this.record(s.sandboxId, "pty.exit", {
      pty_id: s.id,
      exit_code: s.exitCode,
      signal: s.signal,
      reason: why,
      duration_ms: (s.exitedAt ?? Date.now()) - s.createdAt,
    });
    // Whatever the session left in its sandbox (stopped jobs, for one) goes with it after a kill.
    if (why !== "exited") s.kill(why);
    const t = setTimeout(() => this.forget(s), LINGER_MS);
    t.unref();
  }

  private forget(s: PtySession): void {
    s.dispose();
    if (this.ctx.host.holder) removePtyRecord(holdersDir(this.ctx.host.holder.root), s.id);
    if (this.sessions.get(s.id) === s) this.sessions.delete(s.id);
    if (this.sessions.size === 0) this.stopTimers();
  }

  private record(sandboxId: string, type: string, data: Record<string, unknown>): void {
    if (this.closing) return;
    try {
      this.ctx.events.record(sandboxId, type, data);
    } catch {
      /* the event log is closed (shutdown) */
    }
  }

  private startTimers(): void {
    if (!this.poller) {
      this.poller = setInterval(() => this.poll(), POLL_MS);
      this.poller.unref();
    }
    if (!this.pinger) {
      this.pinger = setInterval(() => {
        for (const s of this.sessions.values()) s.ping();
      }, PING_MS);
      this.pinger.unref();
    }
  }

  private stopTimers(): void {
    if (this.poller) clearInterval(this.poller);
    if (this.pinger) clearInterval(this.pinger);
    this.poller = this.pinger = null;
  }

  /** Sessions die with their sandbox: killing its cgroup kills them, and this catches anything else. */
  private poll(): void {
    for (const s of this.sessions.values()) {
      if (s.status !== "running") continue;
      const status = this.ctx.sandboxes.rowUnscoped(s.sandboxId)?.status;
      if (!status || status === "terminated" || status === "expired" || status === "failed") s.kill("sandbox_gone");
      else if (status === "running") s.refresh();
    }
  }

  /**
   * Engine shutdown: disconnect every viewer and kill every session, except on a stop that keeps
   * sandboxes running (SIGUSR2, an upgrade): then held sessions keep running for the next engine.
   */
  shutdown(): void {
    const keep = this.ctx.sandboxes.keepingSandboxes;
    for (const s of this.sessions.values()) {
      s.dropViewers(1001, "engine shutting down");
      if (keep && s.status === "running") s.detach();
      else {
        s.kill("shutdown");
        if (this.ctx.host.holder) removePtyRecord(holdersDir(this.ctx.host.holder.root), s.id);
      }
    }
    this.closing = true;
    this.stopTimers();
  }
}
