import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { sleep } from "../lib/time.js";
import type { SandboxProcess } from "./sandbox-proc.js";
import { spawnSocatInSandboxNet } from "./sandbox-socat.js";

/**
 * Preview relays (engine-notes §4 b): the engine never exposes a sandbox on a host TCP port.
 * Instead a socat per previewed port runs inside the sandbox's network namespace, as the
 * sandbox's uid, in its cgroups, listening on a unix socket in an engine-private directory and
 * connecting to the server inside, so servers bound to the sandbox's own 127.0.0.1 work. The
 * engine's proxy connects to that socket.
 */

/** Connections one relay may carry at once (each is a socat child counted in the sandbox's pids cap). */
export const PREVIEW_RELAY_MAX_CONNECTIONS = 256;
/** A unix socket path must fit sun_path (108 bytes with its NUL). */
const SUN_PATH_MAX = 107;

/** Where a server inside the sandbox listens, as the relay should dial it. */
export interface ListenTarget {
  family: 4 | 6;
  address: string;
}

function hexToIpv4(hex: string): string {
  // /proc/net/tcp prints the address as one 32-bit word in host (little-endian) order.
  const n = Buffer.from(hex, "hex");
  return [n[3], n[2], n[1], n[0]].join(".");
}

function hexToIpv6(hex: string): string {
  // Four 32-bit words, each in host order.
  const bytes = Buffer.alloc(16);
  for (let w = 0; w < 4; w++) {
    const word = Buffer.from(hex.slice(w * 8, w * 8 + 8), "hex");
    for (let b = 0; b < 4; b++) bytes[w * 4 + b] = word[3 - b]!;
  }
  if (bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) {
    return `::ffff:${[...bytes.subarray(12)].join(".")}`;
  }
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
  // The URL parser prints the canonical (compressed) form.
  return new URL(`http://[${groups.join(":")}]/`).hostname.slice(1, -1);
}

function listeners(file: string, port: number, v6: boolean): string[] {
  let table: string;
  try {
    table = fs.readFileSync(file, "utf8");
  } catch {
    return [];
  }
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  const out: string[] = [];
  for (const line of table.split("\n").slice(1)) {
    const cols = line.trim().split(/\s+/);
    const local = cols[1];
    // State 0A is LISTEN.
    if (!local || cols[3] !== "0A") continue;
    const [addr, p] = local.split(":");
    if (p !== hexPort || !addr) continue;
    out.push(v6 ? hexToIpv6(addr) : hexToIpv4(addr));
  }
  return out;
}

/**
 * Which address to dial for `port` inside the sandbox, read from the sandbox's own socket tables
 * (/proc/<pid>/net/tcp{,6} show the network namespace of that pid), or null when nothing listens.
 * Dev servers bind 127.0.0.1, 0.0.0.0, ::1 or :: depending on how `localhost` resolved for them.
 */
export function findListener(targetPid: number, port: number): ListenTarget | null {
  const v4 = listeners(`/proc/${targetPid}/net/tcp`, port, false);
  const v6 = listeners(`/proc/${targetPid}/net/tcp6`, port, true);
  if (v4.some((a) => a === "0.0.0.0" || a === "127.0.0.1")) return { family: 4, address: "127.0.0.1" };
  if (v6.some((a) => a === "::" || a === "::1")) return { family: 6, address: "::1" };
  const mapped = v6.find((a) => a.startsWith("::ffff:"));
  if (v4[0]) return { family: 4, address: v4[0] };
  if (mapped) return { family: 4, address: mapped.slice("::ffff:".length) };
  if (v6[0]) return { family: 6, address: v6[0] };
  return null;
}

/**
 * One relay: socat UNIX-LISTEN (engine side) → TCP to the server inside (sandbox side), forking a
 * child per connection. HTTP requests go through a keep-alive agent so a page's many requests do
 * not pay a fork each; upgrades (WebSocket) open their own connection.
 */
export class PreviewRelay {
  readonly agent: http.Agent;
  lastUsed = Date.now();
  private stderr = "";

  private constructor(
    readonly socketPath: string,
    /** The name socat bound (relative to its cwd), as /proc/net/unix lists it. */
    private readonly boundName: string,
    readonly target: ListenTarget,
    readonly port: number,
    private readonly child: ChildProcess,
  ) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 128, maxFreeSockets: 16, scheduling: "lifo" });
    child.stderr?.on("data", (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-2000)));
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  onExit(listener: () => void): void {
    if (!this.alive) listener();
    else this.child.once("exit", listener);
  }

  /** The directory holding a sandbox's relay sockets: owned by its uid, closed to everyone else. */
  static async ensureDir(sandboxDir: string, uid: number): Promise<string> {
    const dir = path.join(sandboxDir, "pv");
    await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
    await fsp.chown(dir, uid, uid);
    return dir;
  }

  static async start(proc: SandboxProcess, dir: string, port: number, target: ListenTarget): Promise<PreviewRelay> {
    // Unique per relay: a dead relay's cleanup can never remove its successor's socket.
    const socketPath = path.join(dir, `${port}-${target.family}-${randomBytes(4).toString("hex")}.sock`);
    if (Buffer.byteLength(socketPath) > SUN_PATH_MAX) {
      throw new Error(
        `preview socket path ${socketPath} is longer than a unix socket allows; use a shorter BATON_DATA_DIR`,
      );
    }
    const dial = target.family === 4 ? `TCP4:${target.address}:${port}` : `TCP6:[${target.address}]:${port}`;
    // socat's default backlog (5) would make parallel page loads wait on SYN retransmits, hence backlog=128.
    // Named relative to the relay's directory (socat's cwd), so no sandbox id shows in its command line.
    const bound = path.basename(socketPath);
    const child = spawnSocatInSandboxNet(
      proc,
      `UNIX-LISTEN:${bound},fork,unlink-early,backlog=128,max-children=${PREVIEW_RELAY_MAX_CONNECTIONS}`,
      dial,
      { cwd: dir },
    );
    const relay = new PreviewRelay(socketPath, bound, target, port, child);
    child.on("error", (e) => (relay.stderr += ` ${e.message}`));
    try {
      if (child.pid === undefined) throw new Error("could not start the preview relay (nsenter)");
      // Before it listens: every connection it forks is charged to (and frozen with) the sandbox.
      proc.cgroup.attach(child.pid);
      await relay.waitListening(proc.targetPid);
    } catch (e) {
      await relay.close();
      throw new Error(`${(e as Error).message}${relay.stderr.trim() ? ` (${relay.stderr.trim()})` : ""}`);
    }
    return relay;
  }

  /** The socket is listening once the sandbox netns's /proc/net/unix lists it with __SO_ACCEPTCON. */
  private async waitListening(targetPid: number): Promise<void> {
    for (let i = 0; i < 1000; i++) {
      if (!this.alive) throw new Error(`preview relay exited with ${this.child.exitCode ?? this.child.signalCode}`);
      const table = await fsp.readFile(`/proc/${targetPid}/net/unix`, "utf8").catch(() => "");
      for (const line of table.split("\n")) {
        if (line.endsWith(` ${this.boundName}`) && line.split(/\s+/)[3] === "00010000") return;
      }
      await sleep(2);
    }
    throw new Error("preview relay did not start listening within 2 s");
  }

  /**
   * Takes the relay out of service without cutting what runs through it: the listener goes, the
   * HTTP connections it carries close once their current request is done, and WebSocket tunnels
   * (each in its own socat child) carry on.
   */
  async retire(): Promise<void> {
    // Node's agent reads this on every freed socket (it is not in the typings): false destroys it.
    (this.agent as http.Agent & { keepAlive: boolean }).keepAlive = false;
    for (const sockets of Object.values(this.agent.freeSockets)) for (const s of sockets ?? []) s.destroy();
    await this.stopListener();
  }

  /**
   * Stops the relay and every connection through the engine's agent. Its processes live in the
   * sandbox's cgroups, so a terminate has usually killed them already.
   */
  async close(): Promise<void> {
    this.agent.destroy();
    await this.stopListener();
  }

  /** A frozen (paused) relay only dies once the sandbox's teardown thaws it, hence the bounded wait. */
  private async stopListener(): Promise<void> {
    if (this.alive) {
      const exited = new Promise<void>((r) => this.child.once("exit", () => r()));
      this.child.kill("SIGKILL");
      await Promise.race([exited, sleep(1000)]);
    }
    await fsp.rm(this.socketPath, { force: true }).catch(() => undefined);
  }
}
