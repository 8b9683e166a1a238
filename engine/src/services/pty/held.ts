import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { sleep } from "../../lib/time.js";
import type { SpawnSpec } from "../../runtime/sandbox-command.js";

/**
 * A terminal held by its own holder process (runtime/holder/baton-holder.c --pty) instead of
 * node-pty in the engine: the holder keeps the pseudo-terminal's master and the last 64 KiB of
 * output, so the session, its programs and its scrollback outlive an engine restart, and the next
 * engine reconnects to it over the holder's unix socket (root-only directory, never reachable from
 * a sandbox). The same surface as the node-pty object PtySession used.
 */

export interface PtyExit {
  exitCode: number;
  signal?: number;
}

/** Frames are [type:1][length:4, big-endian][payload] both ways (see baton-holder.c). */
function frame(type: string, payload: Buffer): Buffer {
  const h = Buffer.alloc(5);
  h.write(type, 0, "latin1");
  h.writeUInt32BE(payload.length, 1);
  return Buffer.concat([h, payload]);
}

/** The holder reads frames of at most 8 KiB (its buffer) : larger input is cut into several. */
const MAX_INPUT_FRAME = 8192 - 5;

/** A connection to a holder, past its hello; `rest` is what followed the hello. */
interface Opened {
  socket: net.Socket;
  holderPid: number;
  pid: number;
  rest: Buffer;
}

export class HeldPty {
  private dataListeners: ((d: Buffer) => void)[] = [];
  private exitListeners: ((e: PtyExit) => void)[] = [];
  private drainListeners: (() => void)[] = [];
  /** Output that arrived before anyone listened (the scrollback replay right after connecting). */
  private early: Buffer[] = [];
  private exit: PtyExit | null = null;
  private detached = false;
  /**
   * Where input goes: a second connection, input only, once connect() opened it. The holder stops
   * reading a connection whose input the terminal does not take, so flow control and resizes on
   * `socket` must never queue behind a paste (a paused holder waiting for 'C' behind input that
   * only drains once it reads again would hang the terminal).
   */
  private input: net.Socket;

  private constructor(
    private readonly socket: net.Socket,
    readonly holderPid: number,
    /** The session leader on the terminal (host pid), like node-pty's pid. */
    readonly pid: number,
    rest: Buffer,
  ) {
    this.input = socket;
    let buf = rest;
    const parse = () => {
      while (buf.length >= 5) {
        const len = buf.readUInt32BE(1);
        if (buf.length < 5 + len) return;
        const type = String.fromCharCode(buf[0]!);
        const payload = buf.subarray(5, 5 + len);
        buf = buf.subarray(5 + len);
        if (type === "O") this.emitData(Buffer.from(payload));
        else if (type === "X") {
          const m = payload.toString().match(/^(exit|signal) (\d+)$/);
          this.finish(m?.[1] === "signal" ? { exitCode: 0, signal: Number(m[2]) } : { exitCode: Number(m?.[2] ?? 1) });
        }
      }
    };
    socket.on("data", (d: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, d]) : d;
      parse();
    });
    socket.on("error", () => undefined);
    // Closed without an exit frame: the holder died, which hung the terminal up.
    socket.on("close", () => {
      this.finish({ exitCode: 0, signal: 1 });
      this.drained();
    });
    socket.on("drain", () => {
      if (this.input === socket) this.drained();
    });
    socket.unref();
    queueMicrotask(parse);
  }

  /** Starts a holder running `spec` on a new terminal of `cols` x `rows`, and connects to it. */
  static async spawn(bin: string, sockPath: string, spec: SpawnSpec, cols: number, rows: number): Promise<HeldPty> {
    if (!spec.file.startsWith("/")) throw new Error(`the terminal's program must be an absolute path: ${spec.file}`);
    // The socket's path (named after the terminal) by environment, not argument: see baton-holder.c socket_path.
    const child = spawn(bin, ["--pty", "-", String(cols), String(rows), spec.file, ...spec.args], {
      env: { ...spec.env, BATON_HOLDER_SOCKET: sockPath },
      cwd: "/",
      // Its own session: outlives the engine, never gets the engine terminal's Ctrl-C.
      detached: true,
      stdio: "ignore",
    });
    let failed: Error | null = null;
    child.once("error", (e) => (failed = e));
    child.once("exit", (code) => (failed ??= new Error(`the terminal holder exited with ${code}`)));
    child.unref();
    for (let i = 0; ; i++) {
      try {
        return await HeldPty.connect(sockPath);
      } catch (e) {
        if (failed) throw failed;
        if (i >= 500) throw e;
        await sleep(10);
      }
    }
  }

  /**
   * Connects to a running holder: its hello, then the scrollback replay as the first output; then
   * a second connection for input. Without that one (a holder at its client limit), input shares
   * the first.
   */
  static async connect(sockPath: string): Promise<HeldPty> {
    const main = await HeldPty.open(sockPath);
    // Constructed before anything else is awaited: no output frame can arrive without a listener.
    const held = new HeldPty(main.socket, main.holderPid, main.pid, main.rest);
    const input = await HeldPty.open(sockPath).catch(() => null);
    if (input && input.holderPid === held.holderPid && !held.detached && !held.exit) held.useInput(input.socket);
    else input?.socket.destroy();
    return held;
  }

  private static open(sockPath: string): Promise<Opened> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(sockPath);
      let buf = Buffer.alloc(0);
      const t = setTimeout(() => (socket.destroy(), reject(new Error("the terminal holder did not answer"))), 5000);
      const onData = (d: Buffer) => {
        buf = Buffer.concat([buf, d]);
        if (buf.length < 5) return;
        const len = buf.readUInt32BE(1);
        if (buf.length < 5 + len) return;
        const m =
          buf[0] === 0x48
            ? buf
                .subarray(5, 5 + len)
                .toString()
                .match(/^hello (\d+) (\d+)$/)
            : null;
        clearTimeout(t);
        socket.off("data", onData);
        socket.off("error", onError);
        socket.off("close", onClose);
        if (!m) {
          socket.destroy();
          return reject(new Error("the terminal holder spoke another protocol"));
        }
        resolve({ socket, holderPid: Number(m[1]), pid: Number(m[2]), rest: buf.subarray(5 + len) });
      };
      const onError = (e: Error) => {
        clearTimeout(t);
        reject(e);
      };
      // Closed before its hello: a holder that has all the clients it takes, or one that is exiting.
      const onClose = () => {
        clearTimeout(t);
        reject(new Error("the terminal holder closed the connection"));
      };
      socket.on("data", onData);
      socket.once("error", onError);
      socket.once("close", onClose);
    });
  }

  /** Input goes over `socket` from now on; it asks the holder for no output ('Q'). */
  private useInput(socket: net.Socket): void {
    this.input = socket;
    // A holder built before 'Q' existed sends this connection all output as well: read and dropped.
    socket.on("data", () => undefined);
    socket.on("error", () => undefined);
    socket.on("drain", () => this.drained());
    // A lost input connection must not leave the session waiting for a drain.
    socket.on("close", () => this.drained());
    socket.unref();
    socket.write(frame("Q", Buffer.alloc(0)));
  }

  onData(listener: (d: Buffer) => void): void {
    this.dataListeners.push(listener);
    for (const d of this.early.splice(0)) listener(d);
  }

  onExit(listener: (e: PtyExit) => void): void {
    if (this.exit) listener(this.exit);
    else this.exitListeners.push(listener);
  }

  /** Called once input that write() could not hand on at once has gone to the holder. */
  onDrain(listener: () => void): void {
    this.drainListeners.push(listener);
  }

  private emitData(d: Buffer): void {
    if (!this.dataListeners.length) this.early.push(d);
    for (const l of this.dataListeners) l(d);
  }

  private drained(): void {
    for (const l of this.drainListeners) l();
  }

  private finish(e: PtyExit): void {
    if (this.exit || this.detached) return;
    this.exit = e;
    for (const l of this.exitListeners) l(e);
  }

  /**
   * Sends input. False when the holder is not taking it as fast as it comes (the terminal's program
   * does not read it): the caller should send nothing more until onDrain, as with a stream.
   */
  write(data: string | Buffer): boolean {
    const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    if (this.input.destroyed) return true;
    let ok = true;
    for (let at = 0; at < buf.length; at += MAX_INPUT_FRAME)
      ok = this.input.write(frame("I", buf.subarray(at, at + MAX_INPUT_FRAME)));
    return ok;
  }

  resize(cols: number, rows: number): void {
    const p = Buffer.alloc(4);
    p.writeUInt16BE(cols, 0);
    p.writeUInt16BE(rows, 2);
    this.send("R", p);
  }

  pause(): void {
    this.send("P", Buffer.alloc(0));
  }

  resume(): void {
    this.send("C", Buffer.alloc(0));
  }

  /** Lets go of the holder without ending the session (engine stop for an upgrade). */
  detach(): void {
    this.detached = true;
    this.socket.destroy();
    this.input.destroy();
  }

  private send(type: string, payload: Buffer): void {
    if (!this.socket.destroyed) this.socket.write(frame(type, payload));
  }
}

/** What a restarted engine needs to take a terminal over (beside its sandbox's holder record). */
export interface PtyRecord {
  v: 1;
  id: string;
  sandboxId: string;
  holderPid: number;
  holderStart: string;
  /** The session leader the holder forked. */
  childPid: number;
  command: string;
  cwd: string;
  cols: number;
  rows: number;
  createdAt: number;
  relay: boolean;
}

const recordFile = (dir: string, id: string) => path.join(dir, `${id}.pty.json`);

export function writePtyRecord(dir: string, rec: PtyRecord): void {
  fs.writeFileSync(`${recordFile(dir, rec.id)}.tmp`, JSON.stringify(rec), { mode: 0o600 });
  fs.renameSync(`${recordFile(dir, rec.id)}.tmp`, recordFile(dir, rec.id));
}

export function listPtyRecords(dir: string): PtyRecord[] {
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir).filter((n) => n.endsWith(".pty.json"));
  } catch {
    return [];
  }
  const out: PtyRecord[] = [];
  for (const n of names) {
    try {
      const rec = JSON.parse(fs.readFileSync(path.join(dir, n), "utf8")) as PtyRecord;
      if (rec.v === 1 && `${rec.id}.pty.json` === n) out.push(rec);
    } catch {
      /* half-written: ignored, removed with its session */
    }
  }
  return out;
}

export function removePtyRecord(dir: string, id: string): void {
  for (const suffix of [".pty.json", ".sock", ".sock.exit"])
    fs.rmSync(path.join(dir, `${id}${suffix}`), { force: true });
}
