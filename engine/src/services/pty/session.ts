import { constants as osConstants } from "node:os";
import { spawn as ptySpawn } from "node-pty";
import type { RawData, WebSocket } from "ws";
import { ApiError } from "../../errors.js";
import { newId } from "../../lib/ids.js";
import { iso, isoOrNull } from "../../lib/time.js";
import type { SandboxProcess } from "../../runtime/sandbox-proc.js";
import { sandboxCommand, shq, type SpawnSpec } from "../../runtime/sandbox-command.js";
import { descendants, readStat, signalPid as kill, type ProcStat } from "./procfs.js";

/** One terminal: a process on a real pseudo-terminal in the sandbox, its scrollback and its viewers. */

/** Output kept per session and replayed to every viewer that attaches. */
export const PTY_SCROLLBACK_BYTES = 64 * 1024;
/** Signals a client may send; they go to the terminal's foreground process group. */
export const PTY_SIGNALS = [
  "SIGINT",
  "SIGTERM",
  "SIGKILL",
  "SIGHUP",
  "SIGQUIT",
  "SIGTSTP",
  "SIGCONT",
  "SIGWINCH",
] as const;
export type PtySignal = (typeof PTY_SIGNALS)[number];
export const PTY_MAX_COLS = 1000;
export const PTY_MAX_ROWS = 500;

/** Input is held (up to this long) until the relay has put our pty in raw mode, or it would be echoed twice. */
const RELAY_READY_MS = 5_000;
/** Typeahead kept while the relay starts. */
const MAX_PENDING_INPUT = 1024 * 1024;
/** Grace between SIGHUP and SIGKILL when a session is killed. */
const KILL_GRACE_MS = 1_000;
/** Output flow control: reading from the pty stops while a viewer has this much unsent... */
const HIGH_WATER = 1024 * 1024;
/** ...and resumes once every viewer is below this. */
const LOW_WATER = 256 * 1024;
/** A viewer that stays above the high-water mark this long is disconnected rather than stall the session. */
const STALL_MS = 30_000;

/**
 * Runs inside the sandbox, as the sandbox user, on the sandbox's own pty (see `script` below):
 * enter the cwd, restore the caller's SHELL, and hand the command string to sh as exec does.
 */
const INNER =
  'cd -- "$BATON_PTY_CWD" || exit 126; c=$BATON_PTY_CMD; ' +
  'if [ -n "$BATON_PTY_SHELL" ]; then SHELL=$BATON_PTY_SHELL; export SHELL; else unset SHELL; fi; ' +
  'unset BATON_PTY_CWD BATON_PTY_CMD BATON_PTY_SHELL; exec /bin/sh -c "$c"';

const SIGNAL_NAMES = new Map<number, string>(Object.entries(osConstants.signals).map(([name, num]) => [num, name]));

export interface PtyOpenRequest {
  cols: number;
  rows: number;
  command: string;
  cwd: string;
  env: Record<string, string>;
}

export interface PtyView {
  id: string;
  sandbox_id: string;
  status: "running" | "exited";
  command: string;
  cwd: string;
  cols: number;
  rows: number;
  viewers: number;
  ws_path: string;
  created_at: string;
  exited_at: string | null;
  exit_code: number | null;
  signal: string | null;
}

export type PtyExitReason = "exited" | "killed" | "idle" | "sandbox_gone" | "shutdown";

/**
 * The terminal under a session: a holder process that outlives the engine (pty/held.ts), or
 * node-pty in the engine where no holder could be built (the session then dies with the engine).
 */
export interface TerminalIo {
  /** The session leader on the terminal (host pid). */
  readonly pid: number;
  onData(listener: (d: Buffer) => void): void;
  onExit(listener: (e: { exitCode: number; signal?: number }) => void): void;
  /** False: the terminal is not taking input as fast as it comes; send more after onDrain. */
  write(data: string | Buffer): boolean | void;
  onDrain?(listener: () => void): void;
  resize(cols: number, rows: number): void;
  pause(): void;
  resume(): void;
  /** Lets go of a held terminal without ending it (engine stop for an upgrade). */
  detach?(): void;
}

/** node-pty in the engine process: the fallback without a holder. */
export function spawnNodePty(spawnArgs: SpawnSpec, cols: number, rows: number): TerminalIo {
  const pty = ptySpawn(spawnArgs.file, spawnArgs.args, {
    name: "xterm-256color",
    cols,
    rows,
    cwd: "/",
    env: spawnArgs.env,
    encoding: null,
  });
  // node-pty rethrows unexpected read errors unless someone else listens for them.
  (pty as unknown as NodeJS.EventEmitter).on("error", () => undefined);
  return {
    pid: pty.pid,
    onData: (l) => void pty.onData((d) => l(d as unknown as Buffer)),
    onExit: (l) => void pty.onExit(l),
    write: (d) => pty.write(d as string),
    resize: (c, r) => pty.resize(c, r),
    pause: () => pty.pause(),
    resume: () => pty.resume(),
  };
}

function rawToBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/** The last `cap` bytes of output, in the chunks they arrived in. */
class Scrollback {
  private chunks: Buffer[] = [];
  private size = 0;
  constructor(private readonly cap: number) {}
  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.chunks.length > 1 && this.size - this.chunks[0]!.length >= this.cap)
      this.size -= this.chunks.shift()!.length;
    if (this.size > this.cap) {
      let first = this.chunks[0]!.subarray(this.size - this.cap);
      // Do not start the replay in the middle of a UTF-8 sequence.
      let skip = 0;
      while (skip < first.length && skip < 3 && (first[skip]! & 0xc0) === 0x80) skip++;
      first = first.subarray(skip);
      this.size = this.size - this.chunks[0]!.length + first.length;
      this.chunks[0] = first;
    }
  }
  snapshot(): Buffer {
    return Buffer.concat(this.chunks, this.size);
  }
}

interface Viewer {
  ws: WebSocket;
  alive: boolean;
}

/**
 * How a session is started. Host side (root, HOST_ENV): [bash: close inherited fds] → sh: join the
 * sandbox's cgroups → the sandbox's entry (SandboxProcess.entry(): host prlimit and nsenter, then the
 * static seccomp loader) as its user. Sandbox side: sh evaluates
 * the payload, which empties the environment it inherited, exports the sandbox's, and starts
 * util-linux `script`. That allocates a pty from the sandbox's own devpts and relays it to ours,
 * so `tty`, ttyname(3) and job control see a /dev/pts/N that exists inside the sandbox (the host
 * pty's slave has no name there). Without `script` the command runs on the host pty directly.
 */
export function buildSpawn(proc: SandboxProcess, req: PtyOpenRequest, relay: boolean, closeFds: boolean): SpawnSpec {
  const env: Record<string, string> = { ...proc.spec.env, TERM: "xterm-256color", ...req.env };
  const exported: Record<string, string> = {
    ...env,
    BATON_PTY_CWD: req.cwd,
    BATON_PTY_CMD: req.command,
    BATON_PTY_SHELL: env.SHELL ?? "",
    // `script -c` runs its command with $SHELL; INNER restores the caller's.
    SHELL: "/bin/sh",
  };
  const script = relay ? `exec /usr/bin/script -qec ${shq(INNER)} /dev/null` : `exec /bin/sh -c ${shq(INNER)}`;
  return sandboxCommand(proc, exported, script, { closeFds, argv0: "baton-pty" });
}

export class PtySession {
  readonly id: string;
  readonly createdAt: number;
  status: "running" | "exited" = "running";
  cols: number;
  rows: number;
  exitedAt: number | null = null;
  exitCode: number | null = null;
  signal: string | null = null;
  private readonly pty: TerminalIo;
  private readonly scrollback = new Scrollback(PTY_SCROLLBACK_BYTES);
  private readonly viewers = new Set<Viewer>();
  /** Viewers the engine cut off (their token was revoked): nothing they still send is read. */
  private readonly cutOffViewers = new WeakSet<WebSocket>();
  /** Session ids (host numbering) of this terminal's process tree, for finding what it left behind. */
  private readonly sids = new Set<number>();
  private killReason: PtyExitReason | null = null;
  /** Told of every new size (pty.ts keeps a held terminal's record current for a restarted engine). */
  onResize: ((cols: number, rows: number) => void) | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  private killTimer: NodeJS.Timeout | null = null;
  private drainTimer: NodeJS.Timeout | null = null;
  private pausedSince = 0;
  /** Typeahead waiting for the relay; null once input flows straight to the pty. */
  private pendingInput: Buffer[] | null = null;
  private pendingBytes = 0;
  /** The terminal is behind on input: no viewer is read until it drains (see holdInput). */
  private inputHeld = false;

  constructor(
    readonly sandboxId: string,
    private readonly proc: SandboxProcess,
    readonly command: string,
    readonly cwd: string,
    size: { cols: number; rows: number },
    private readonly relay: boolean,
    private readonly idleMs: number,
    io: TerminalIo,
    private readonly onExit: (s: PtySession, reason: PtyExitReason) => void,
    /**
     * Its id and age when the caller chose them; `adopted`: a restarted engine took it over
     * (pty.ts adoptAfterRestart), so its relay is long set up and no input is held back.
     */
    known?: { id: string; createdAt: number; adopted: boolean },
  ) {
    this.id = known?.id ?? newId("pty");
    this.createdAt = known?.createdAt ?? Date.now();
    this.cols = size.cols;
    this.rows = size.rows;
    this.pty = io;
    // The terminal's child is a session leader: its pid is the outer session's id.
    this.sids.add(this.pty.pid);
    // A held terminal replays its scrollback first (after a restart: everything before it).
    this.pty.onData((d) => this.output(d));
    this.pty.onExit(({ exitCode, signal }) => this.exited(exitCode, signal));
    this.pty.onDrain?.(() => this.releaseInput());
    this.armIdle();
    if (relay && !known?.adopted) this.awaitRelay();
  }

  /** Engine stop for an upgrade: the terminal keeps running in its holder for the next engine. */
  detach(): void {
    this.dispose();
    this.pty.detach?.();
  }

  /**
   * `script` switches our pty to raw mode before it forks the sandbox-side session, so until that
   * session exists, anything written would be echoed by our pty's line discipline as well.
   */
  private awaitRelay(): void {
    this.pendingInput = [];
    const started = Date.now();
    const check = () => {
      if (this.status !== "running") return;
      if (this.foregroundGroup() === null && Date.now() - started < RELAY_READY_MS)
        return void setTimeout(check, 10).unref();
      const pending = this.pendingInput ?? [];
      this.pendingInput = null;
      this.pendingBytes = 0;
      for (const chunk of pending) this.toTerminal(chunk);
    };
    setTimeout(check, 10).unref();
  }

  get pid(): number {
    return this.pty.pid;
  }

  get wsPath(): string {
    return `/v1/sandboxes/${this.sandboxId}/pty/${this.id}/ws`;
  }

  view(): PtyView {
    return {
      id: this.id,
      sandbox_id: this.sandboxId,
      status: this.status,
      command: this.command,
      cwd: this.cwd,
      cols: this.cols,
      rows: this.rows,
      viewers: this.viewers.size,
      ws_path: this.wsPath,
      created_at: iso(this.createdAt),
      exited_at: isoOrNull(this.exitedAt),
      exit_code: this.exitCode,
      signal: this.signal,
    };
  }

  private output(chunk: Buffer): void {
    this.scrollback.push(chunk);
    for (const v of this.viewers) v.ws.send(chunk, { binary: true });
    this.flowControl();
  }

  /** Stops reading the pty (the program blocks on write, like a real terminal) while a viewer lags. */
  private flowControl(): void {
    if (this.drainTimer || ![...this.viewers].some((v) => v.ws.bufferedAmount > HIGH_WATER)) return;
    this.pty.pause();
    this.pausedSince = Date.now();
    this.drainTimer = setInterval(() => {
      const stalled = Date.now() - this.pausedSince > STALL_MS;
      for (const v of this.viewers) if (stalled && v.ws.bufferedAmount > LOW_WATER) v.ws.terminate();
      if (this.status === "running" && [...this.viewers].some((v) => v.ws.bufferedAmount > LOW_WATER)) return;
      clearInterval(this.drainTimer!);
      this.drainTimer = null;
      this.pty.resume();
    }, 50);
    this.drainTimer.unref();
  }

  private exited(exitCode: number, signal: number | undefined): void {
    if (this.status === "exited") return;
    this.status = "exited";
    // Paused viewers would not read the closing handshake.
    this.releaseInput();
    this.exitedAt = Date.now();
    this.exitCode = signal ? 128 + signal : exitCode;
    this.signal = signal ? (SIGNAL_NAMES.get(signal) ?? `SIG${signal}`) : null;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    if (this.drainTimer) clearInterval(this.drainTimer);
    this.drainTimer = null;
    for (const v of [...this.viewers]) this.finish(v.ws);
    this.viewers.clear();
    this.onExit(this, this.killReason ?? "exited");
  }

  private finish(ws: WebSocket): void {
    ws.send(JSON.stringify({ type: "exit", exit_code: this.exitCode, signal: this.signal }));
    ws.close(1000, "pty exited");
  }

  /** A new viewer: replay the scrollback, then live output; its frames drive the terminal. */
  attach(ws: WebSocket): void {
    ws.on("error", () => undefined);
    const backlog = this.scrollback.snapshot();
    if (backlog.length) ws.send(backlog, { binary: true });
    if (this.status === "exited") return this.finish(ws);
    const viewer: Viewer = { ws, alive: true };
    this.viewers.add(viewer);
    if (this.inputHeld) ws.pause();
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    ws.on("pong", () => (viewer.alive = true));
    ws.on("message", (data, isBinary) => this.onMessage(ws, data, isBinary));
    ws.on("close", () => {
      this.viewers.delete(viewer);
      this.armIdle();
    });
  }

  /** Service-wide keepalive tick: drop viewers whose socket died silently (so idle kills still happen). */
  ping(): void {
    // A paused viewer cannot read its pong: liveness waits until input flows again.
    if (this.inputHeld) return;
    for (const v of this.viewers) {
      if (!v.alive) {
        v.ws.terminate();
        continue;
      }
      v.alive = false;
      v.ws.ping();
    }
  }

  private onMessage(ws: WebSocket, data: RawData, isBinary: boolean): void {
    if (this.cutOffViewers.has(ws)) return;
    if (isBinary) return this.write(rawToBuffer(data));
    const fail = (message: string) => ws.send(JSON.stringify({ type: "error", message }));
    let msg: unknown;
    try {
      msg = JSON.parse(rawToBuffer(data).toString("utf8"));
    } catch {
      return fail(
        'Text frames are JSON control messages: {"type":"input"|"resize"|"signal",…}; send raw input as binary frames',
      );
    }
    const m = (msg ?? {}) as Record<string, unknown>;
    try {
      switch (m.type) {
        case "input":
          if (typeof m.data !== "string") return fail("input needs a string data field");
          return this.write(m.data);
        case "resize":
          this.resize(m.cols, m.rows);
          return;
        case "signal":
          this.sendSignal(normalizeSignal(m.signal));
          return;
        default:
          return fail(`Unknown message type ${JSON.stringify(m.type)}; expected input, resize or signal`);
      }
    } catch (e) {
      return fail(e instanceof ApiError && typeof e.detail === "string" ? e.detail : (e as Error).message);
    }
  }

  write(data: string | Buffer): void {
    if (this.status !== "running" || data.length === 0) return;
    if (this.pendingInput) {
      const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
      if (this.pendingBytes + buf.length > MAX_PENDING_INPUT) return;
      this.pendingInput.push(buf);
      this.pendingBytes += buf.length;
      return;
    }
    this.toTerminal(data);
  }

  private toTerminal(data: string | Buffer): void {
    if (this.pty.write(data) === false) this.holdInput();
  }

  /**
   * A paste the terminal's program does not read: the holder stops taking input and its socket
   * fills. Rather than buffer without limit, stop reading every viewer (TCP then pushes back on
   * the clients, as a real terminal's tty does on a writer) until the terminal takes it; then resume.
   * Nothing is dropped. Control messages on the socket wait too (the REST signal endpoint does not).
   */
  private holdInput(): void {
    if (this.inputHeld) return;
    this.inputHeld = true;
    for (const v of this.viewers) v.ws.pause();
  }

  private releaseInput(): void {
    if (!this.inputHeld) return;
    this.inputHeld = false;
    for (const v of this.viewers) {
      // Its pong may still be unread: it gets a full keepalive period again.
      v.alive = true;
      v.ws.resume();
    }
  }

  resize(cols: unknown, rows: unknown): void {
    const ok = (n: unknown, max: number) => typeof n === "number" && Number.isInteger(n) && n >= 1 && n <= max;
    if (!ok(cols, PTY_MAX_COLS) || !ok(rows, PTY_MAX_ROWS)) {
      throw new ApiError("validation_error", `cols must be an integer 1..${PTY_MAX_COLS} and rows 1..${PTY_MAX_ROWS}`);
    }
    if (this.status !== "running") throw exitedError(this);
    this.cols = cols as number;
    this.rows = rows as number;
    try {
      // The kernel sends SIGWINCH to our side; `script` copies the size onto the sandbox's pty.
      this.pty.resize(this.cols, this.rows);
    } catch {
      /* the pty closed under us: the exit handler follows */
    }
    this.onResize?.(this.cols, this.rows);
  }

  /**
   * The terminal's foreground process group (host pid), where Ctrl-C would go. With the relay it is
   * the sandbox-side pty's: the first session leader below ours that has a controlling terminal.
   */
  foregroundGroup(): number | null {
    const stats = descendants(this.pty.pid)
      .map(readStat)
      .filter((s): s is ProcStat => s !== null);
    for (const s of stats) if (s.sid > 0) this.sids.add(s.sid);
    if (this.relay) {
      const leader = stats.find((s) => s.pid !== this.pty.pid && s.sid === s.pid && s.ttyNr !== 0 && s.tpgid > 0);
      return leader ? leader.tpgid : null;
    }
    const outer = stats.find((s) => s.pid === this.pty.pid);
    return outer && outer.tpgid > 0 ? outer.tpgid : null;
  }

  /** Sends `signal` to the foreground process group; false when there is none (yet). */
  sendSignal(signal: PtySignal): boolean {
    if (this.status !== "running") throw exitedError(this);
    const pgrp = this.foregroundGroup();
    if (!pgrp) return false;
    return kill(-pgrp, signal);
  }

  /** Remembers session ids so leftovers can be found once the tree is broken up. */
  refresh(): void {
    if (this.status !== "running") return;
    for (const pid of descendants(this.pty.pid)) {
      const s = readStat(pid);
      if (s && s.sid > 0) this.sids.add(s.sid);
    }
  }

  /** Every process of this session still alive in the sandbox: the tree, plus anything that kept its session id. */
  private members(): number[] {
    const pids = new Set(this.status === "running" ? descendants(this.pty.pid) : []);
    for (const pid of pids) {
      const s = readStat(pid);
      if (s && s.sid > 0) this.sids.add(s.sid);
    }
    for (const pid of this.proc.cgroup.pids()) {
      const s = readStat(pid);
      if (s && this.sids.has(s.sid)) pids.add(pid);
    }
    return [...pids];
  }

  /** Hangs the terminal up (SIGHUP to the whole session), then SIGKILLs what is left after a grace. */
  kill(reason: PtyExitReason): void {
    if (this.killTimer) return;
    if (this.status === "running") this.killReason ??= reason;
    for (const pid of this.members()) kill(pid, "SIGHUP");
    this.killTimer = setTimeout(() => {
      for (const pid of this.members()) kill(pid, "SIGKILL");
    }, KILL_GRACE_MS);
    this.killTimer.unref();
  }

  /** Closes every viewer (engine shutdown). */
  /**
   * Ends one viewer from the engine's side (its token was revoked): from now on nothing it sends
   * reaches the terminal; it gets an error frame saying why and a close with `code`, and a client
   * that does not answer the close is dropped a second later. The terminal itself runs on for its
   * other viewers (and the idle timer), as after any viewer leaves.
   */
  cutOff(ws: WebSocket, code: number, reason: string, message: string): void {
    this.cutOffViewers.add(ws);
    for (const v of this.viewers) if (v.ws === ws) this.viewers.delete(v);
    this.armIdle();
    if (ws.readyState === ws.OPEN) {
      ws.send(JSON.stringify({ type: "error", message }));
      ws.close(code, reason);
    }
    setTimeout(() => ws.terminate(), 1000).unref();
  }

  dropViewers(code: number, why: string): void {
    this.releaseInput();
    for (const v of this.viewers) v.ws.close(code, why);
  }

  private armIdle(): void {
    if (this.status !== "running" || this.viewers.size > 0 || this.idleTimer) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (this.viewers.size === 0) this.kill("idle");
    }, this.idleMs);
    this.idleTimer.unref();
  }

  dispose(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    if (this.drainTimer) clearInterval(this.drainTimer);
  }
}

function exitedError(s: PtySession): ApiError {
  return new ApiError("session_not_found", `PTY session ${s.id} has exited (exit code ${s.exitCode})`, {
    exit_code: s.exitCode,
    signal: s.signal,
  });
}

/** "SIGINT", "sigint" and "INT" all mean SIGINT. */
export function normalizeSignal(input: unknown): PtySignal {
  const s = typeof input === "string" ? input.trim().toUpperCase() : "";
  const name = (s.startsWith("SIG") ? s : `SIG${s}`) as PtySignal;
  if (!PTY_SIGNALS.includes(name))
    throw new ApiError("validation_error", `signal must be one of ${PTY_SIGNALS.join(", ")}`);
  return name;
}
