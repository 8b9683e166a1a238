import { spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildHelper, type HelperBuild } from "./c-helper.js";

/**
 * Sandboxes outlive the engine. Each sandbox's bwrap is started through its own holder
 * (holder/baton-holder.c): a tiny static process in its own session that is bwrap's parent (so
 * bwrap's --die-with-parent ties the sandbox to the holder, not to the engine) and answers on a
 * unix socket in the engine's root-only holders directory. A restarted engine finds every holder
 * there, checks it is the very process it started (pid, start time, the init's parent and cgroup),
 * and adopts the sandbox; a holder whose sandbox ended while no engine ran leaves `<socket>.exit`.
 *
 * Why a C helper, and not a Node process per sandbox, a subreaper or bare `setsid` + polling:
 * a holder costs ~0.7 MiB of RSS (a Node process ~40 MiB, too much for many idle sandboxes per
 * GiB); a subreaper would itself have to outlive the engine and so is the same thing for all
 * sandboxes at once (one crash loses all); polling pids for exit is late and racy, while a socket
 * that closes is immediate. The binary is built by the engine from this repository's source into
 * a root-only cache, like the seccomp helper: nothing privileged ever runs a file a sandbox can write.
 */

const SOURCE = fileURLToPath(new URL("./holder/baton-holder.c", import.meta.url));
/** sun_path holds 108 bytes with its NUL. */
const SUN_PATH_MAX = 107;

export type HolderSetup = HelperBuild;

/** Builds (or finds in the cache) the holder binary. Never throws: a reason comes back instead. */
export function prepareHolder(opts: { disabled: boolean; stateDir: string }): HolderSetup {
  return buildHelper({ name: "baton-holder", what: "the sandbox holder", source: SOURCE, ...opts });
}

/** The engine's root-only directory of holder sockets and adoption records. */
export function holdersDir(root: string): string {
  return path.join(root, "holders");
}

export function ensureHoldersDir(root: string): string {
  const dir = holdersDir(root);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
  return dir;
}

export function holderSocket(root: string, id: string): string {
  const p = path.join(holdersDir(root), `${id}.sock`);
  if (Buffer.byteLength(p) > SUN_PATH_MAX)
    throw new Error(`the holder socket path ${p} is longer than a unix socket allows; use a shorter BATON_DATA_DIR`);
  return p;
}

/** What a restarted engine needs to take a sandbox over (written at start, removed at release). */
export interface HolderRecord {
  v: 1;
  id: string;
  holderPid: number;
  holderStart: string;
  /** Host pid of the sandbox's init, and its start time (pid reuse check). */
  initPid: number;
  initStart: string;
  /** The pid the holder forked (bwrap), the init's parent. */
  childPid: number;
  mode: "bwrap-userns" | "bwrap-root";
  rlimits: string[];
  /** The SandboxSpec, as JSON. */
  spec: unknown;
  /** Extra helper processes outside the sandbox's namespaces (slirp4netns), by pid and start time. */
  helpers: { name: string; pid: number; start: string }[];
}

export function writeRecord(root: string, rec: HolderRecord): void {
  const file = path.join(holdersDir(root), `${rec.id}.json`);
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(rec), { mode: 0o600 });
  fs.renameSync(tmp, file);
}

export function readRecord(root: string, id: string): HolderRecord | null {
  try {
    const rec = JSON.parse(fs.readFileSync(path.join(holdersDir(root), `${id}.json`), "utf8")) as HolderRecord;
    return rec.v === 1 && rec.id === id ? rec : null;
  } catch {
    return null;
  }
}

/** Every record in the directory (the launcher looks for a live holder to share its mount namespace). */
export function listRecords(root: string): HolderRecord[] {
  let names: string[] = [];
  try {
    names = fs.readdirSync(holdersDir(root)).filter((n) => n.endsWith(".json"));
  } catch {
    return [];
  }
  return names.map((n) => readRecord(root, n.slice(0, -".json".length))).filter((r): r is HolderRecord => !!r);
}

/** Removes a sandbox's record, socket, exit note and slirp4netns log. */
export function removeRecord(root: string, id: string): void {
  for (const suffix of [".json", ".sock", ".sock.exit", ".slirp.log"])
    fs.rmSync(path.join(holdersDir(root), `${id}${suffix}`), { force: true });
}

/** The exit line a holder left when its sandbox ended while no engine was connected, or null. */
export function exitNote(root: string, id: string): string | null {
  try {
    return fs.readFileSync(path.join(holdersDir(root), `${id}.sock.exit`), "utf8").trim() || null;
  } catch {
    return null;
  }
}

/**
 * A process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat), or null when it
 * is gone. A pid and its start time name one process for good: a reused pid starts later.
 */
export function procStartTime(pid: number): string | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return s.slice(s.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

export function procParent(pid: number): number | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(s.slice(s.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return null;
  }
}

/** Whether `pid` is still the process recorded with `start`. */
export function sameProcess(pid: number, start: string): boolean {
  return procStartTime(pid) === start;
}

/** The reason a holder's exit line gives, in the words the engine uses for a dead sandbox. */
export function exitReason(line: string | null): string {
  const m = line?.match(/^(exit|signal) (\d+)$/);
  if (!m) return "the sandbox's holder process died";
  if (m[1] === "exit") return `sandbox init exited with code ${m[2]}`;
  const name = Object.entries(os.constants.signals).find(([, n]) => n === Number(m[2]))?.[0];
  return `sandbox init killed by ${name ?? `signal ${m[2]}`}`;
}

/** A connection to one holder: its identity, its sandbox's end, and the kill switch. */
export class HolderLink {
  private listeners: ((reason: string) => void)[] = [];
  private ended: string | null = null;

  private constructor(
    private readonly socket: net.Socket,
    readonly holderPid: number,
    readonly childPid: number,
  ) {
    let buf = "";
    let exitLine: string | null = null;
    socket.on("data", (d: Buffer) => {
      buf += d.toString();
      const m = buf.match(/^(exit|signal) \d+$/m);
      if (m) exitLine = m[0];
    });
    socket.on("error", () => undefined);
    socket.on("close", () => this.end(exitReason(exitLine)));
    // The link must not keep an engine that is shutting down alive.
    socket.unref();
  }

  /** Connects and reads the hello line; rejects when nothing listens (the holder is gone). */
  static connect(sockPath: string, timeoutMs = 5000): Promise<HolderLink> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(sockPath);
      let buf = "";
      const t = setTimeout(() => {
        socket.destroy();
        reject(new Error("the sandbox holder did not answer within 5 s"));
      }, timeoutMs);
      const onData = (d: Buffer) => {
        buf += d.toString();
        const m = buf.match(/^hello (\d+) (\d+)\n/);
        if (!m) return;
        clearTimeout(t);
        socket.off("data", onData);
        socket.off("error", onError);
        const link = new HolderLink(socket, Number(m[1]), Number(m[2]));
        const rest = buf.slice(m[0].length);
        if (rest) socket.emit("data", Buffer.from(rest));
        resolve(link);
      };
      const onError = (e: Error) => {
        clearTimeout(t);
        reject(e);
      };
      socket.on("data", onData);
      socket.once("error", onError);
      socket.once("close", () => {
        clearTimeout(t);
        reject(new Error("the sandbox holder closed the connection"));
      });
    });
  }

  get exited(): boolean {
    return this.ended !== null;
  }

  onExit(listener: (reason: string) => void): void {
    if (this.ended !== null) listener(this.ended);
    else this.listeners.push(listener);
  }

  private end(reason: string): void {
    if (this.ended !== null) return;
    this.ended = reason;
    for (const l of this.listeners) l(reason);
  }

  /** Asks the holder to SIGKILL its child (bwrap); the holder then reports and exits. */
  kill(): void {
    if (!this.socket.destroyed) this.socket.write("kill\n");
  }

  /** Waits (bounded) for the holder to be gone. */
  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.ended !== null) return resolve();
      const t = setTimeout(resolve, ms);
      this.onExit(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }
}

/**
 * Ends a holder this data dir no longer wants (its sandbox failed, ended or has no row): asks it to
 * kill its sandbox when it answers as the recorded process, then removes the record.
 */
export async function killHolder(root: string, id: string): Promise<void> {
  const rec = readRecord(root, id);
  if (!rec || sameProcess(rec.holderPid, rec.holderStart)) {
    const link = await HolderLink.connect(holderSocket(root, id), 2000).catch(() => null);
    // Only a holder in this root-only directory can answer here; with a record it must be that one.
    if (link && (!rec || link.holderPid === rec.holderPid)) {
      link.kill();
      await link.wait(5000);
    }
  }
  removeRecord(root, id);
}

/** A mount point from /proc/self/mountinfo (octal escapes for space, tab, newline, backslash). */
function unescapeMount(p: string): string {
  return p.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/**
 * A restarted engine shares the mount namespace its sandboxes' holders keep (server.ts), and so
 * finds the mounts of the earlier run: scratch of sandboxes that are not adopted, template views,
 * volume images. Every mount below `root` goes (deepest first, lazily), except the scratch of the
 * sandboxes in `keep` and the runtime binds (rt/) this run made already. In a fresh namespace
 * there is nothing to do.
 */
export function unmountLeftovers(root: string, keep: string[]): void {
  let table = "";
  try {
    table = fs.readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return;
  }
  const under = (p: string, dir: string) => p === dir || p.startsWith(`${dir}/`);
  const points = table
    .split("\n")
    .map((l) => l.split(" ")[4])
    .filter((p): p is string => !!p)
    .map(unescapeMount)
    .filter((p) => p.startsWith(`${root}/`) && !under(p, path.join(root, "rt")) && !keep.some((k) => under(p, k)))
    .sort((a, b) => b.length - a.length);
  for (const p of new Set(points)) spawnSync("umount", ["-l", p], { stdio: "ignore" });
}

/**
 * For the launcher (server.ts, in the host's mount namespace): a path to the mount namespace of a
 * live holder of this data dir, or null. The namespace file is opened and kept open by this process
 * (so the path, /proc/<our pid>/fd/N, stays valid for nsenter), and the holder's start time is
 * checked again after the open: a pid reused in between is never joined.
 */
export function holderMountNamespace(root: string): string | null {
  for (const rec of listRecords(root)) {
    if (!sameProcess(rec.holderPid, rec.holderStart)) continue;
    let fd: number;
    try {
      fd = fs.openSync(`/proc/${rec.holderPid}/ns/mnt`, "r");
    } catch {
      continue;
    }
    if (sameProcess(rec.holderPid, rec.holderStart)) return `/proc/${process.pid}/fd/${fd}`;
    fs.closeSync(fd);
  }
  return null;
}
