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

export class HeldPty {
  private dataListeners: ((d: Buffer) => void)[] = [];
  private exitListeners: ((e: PtyExit) => void)[] = [];
  /** Output that arrived before anyone listened (the scrollback replay right after connecting). */
  private early: Buffer[] = [];
  private exit: PtyExit | null = null;
  private detached = false;

  private constructor(
    private readonly socket: net.Socket,
    readonly holderPid: number,
    /** The session leader on the terminal (host pid), like node-pty's pid. */
    readonly pid: number,
    rest: Buffer,
  ) {
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
    socket.on("close", () => this.finish({ exitCode: 0, signal: 1 }));
    socket.unref();
    queueMicrotask(parse);
  }

  /** Starts a holder running `spec` on a new terminal of `cols` x `rows`, and connects to it. */
  static async spawn(bin: string, sockPath: string, spec: SpawnSpec, cols: number, rows: number): Promise<HeldPty> {
    if (!spec.file.startsWith("/")) throw new Error(`the terminal's program must be an absolute path: ${spec.file}`);
    const child = spawn(bin, ["--pty", sockPath, String(cols), String(rows), spec.file, ...spec.args], {
      env: spec.env,
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

  /** Connects to a running holder: its hello, then the scrollback replay as the first output. */
  static connect(sockPath: string): Promise<HeldPty> {
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
        if (!m) {
          socket.destroy();
          return reject(new Error("the terminal holder spoke another protocol"));
        }
        resolve(new HeldPty(socket, Number(m[1]), Number(m[2]), buf.subarray(5 + len)));
      };
      const onError = (e: Error) => {
        clearTimeout(t);
        reject(e);
      };
      socket.on("data", onData);
      socket.once("error", onError);
    });
  }

  onData(listener: (d: Buffer) => void): void {
    this.dataListeners.push(listener);
    for (const d of this.early.splice(0)) listener(d);
  }

  onExit(listener: (e: PtyExit) => void): void {
    if (this.exit) listener(this.exit);
    else this.exitListeners.push(listener);
  }

  private emitData(d: Buffer): void {
    if (!this.dataListeners.length) this.early.push(d);
    for (const l of this.dataListeners) l(d);
  }

  private finish(e: PtyExit): void {
    if (this.exit || this.detached) return;
    this.exit = e;
    for (const l of this.exitListeners) l(e);
  }

  write(data: string | Buffer): void {
    const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    for (let at = 0; at < buf.length; at += MAX_INPUT_FRAME) this.send("I", buf.subarray(at, at + MAX_INPUT_FRAME));
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
