import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import path from "node:path";
import type { Readable, Writable } from "node:stream";
import type { Host } from "./host.js";
import type { SandboxCgroup } from "./cgroups.js";
import type { BaseImage } from "./templates.js";
import { closeFilter, openFilter, type SeccompFilter } from "./seccomp.js";
import { procMaskArgs } from "./proc-masks.js";
import {
  exitNote,
  exitReason,
  HolderLink,
  holderSocket,
  procParent,
  procStartTime,
  readRecord,
  removeRecord,
  sameProcess,
  writeRecord,
  type HolderRecord,
} from "./holder.js";
import { sleep } from "../lib/time.js";

/** The uid/gid a sandbox's user sees inside its own user namespace. */
export const INNER_UID = 1000;

/** For exec: the descriptor of the seccomp loader (the program is one below; sandbox-command.ts). */
export const SECCOMP_FD = 9;
/** The descriptor bwrap reads the seccomp program from at start (fd 9 is a build's agent socket). */
const BWRAP_SECCOMP_FD = 10;
/**
 * The descriptor bwrap reads its arguments from (--args): a process's command line is readable by
 * every local user, and bwrap's names the sandbox's directories, so its own id.
 */
const BWRAP_ARGS_FD = 11;

export interface SandboxSpec {
  id: string;
  /** Unprivileged host uid owning every process and file of this sandbox. */
  uid: number;
  /** Host directory holding workspace/ and tmp/. */
  dir: string;
  image: BaseImage;
  /** Environment every process in the sandbox starts with (image + create-time env). */
  env: Record<string, string>;
  network: "off" | "restricted" | "open";
  /** Extra read-write binds (volumes, issue 5). */
  binds?: { src: string; dest: string }[];
  /** Per-process fallbacks where the cgroup controllers are missing. */
  limits: { memoryBytes: number; pidsMax: number };
  /**
   * A custom template's root filesystem (issue 5, runtime/layers.ts), bound as / in place of the
   * host userland pieces; writable only for the template's own build sandbox.
   */
  rootfs?: { path: string; writable: boolean };
  /**
   * A template build: its processes run as `uid` on the host, and where user namespaces work as
   * uid 0 inside the build's own (root there, nobody outside), with every capability dropped. Its
   * root filesystem's layers are idmapped (runtime/overlay.ts) so that this uid owns what the
   * host's root owns there. Never the host's uid 0.
   */
  build?: boolean;
  /**
   * Template builds (template-build.ts): the init is the build's step agent instead of the
   * resident loop. `init` runs as pid 1 with the host directory `ctl` bound read-only at `dest`;
   * it reads requests from and answers on fd 9, a socket (SandboxProcess.agentIo). Nothing ever
   * enters such a sandbox from the host: its steps are the init's children.
   */
  agent?: { ctl: string; dest: string; init: string };
}

export interface SandboxDirs {
  workspace: string;
  tmp: string;
}

export function sandboxDirs(dir: string): SandboxDirs {
  return { workspace: path.join(dir, "workspace"), tmp: path.join(dir, "tmp") };
}

/**
 * Creates the sandbox's private directories, owned by its uid and closed to everyone else. Where
 * the engine may mount (root, private mount namespace), they live on a size-capped tmpfs: RAM-backed
 * scratch as the contract describes, which no sandbox can use to fill the host's disk.
 */
export async function createSandboxDirs(
  dir: string,
  uid: number,
  scratch: { bytes: number; inodes: number } | null,
): Promise<SandboxDirs> {
  const dirs = sandboxDirs(dir);
  await fsp.mkdir(dir, { recursive: true, mode: 0o711 });
  if (scratch) {
    await execFileP("mount", [
      "-t",
      "tmpfs",
      "-o",
      `size=${scratch.bytes},nr_inodes=${scratch.inodes},mode=0711,nosuid,nodev`,
      "baton-scratch",
      dir,
    ]);
  }
  for (const d of [dirs.workspace, dirs.tmp]) {
    await fsp.mkdir(d, { recursive: true, mode: 0o700 });
    await fsp.chown(d, uid, uid);
    await fsp.chmod(d, 0o700);
  }
  return dirs;
}

const execFileP = promisify(execFile);

/** Undoes createSandboxDirs: unmounts the scratch tmpfs (if any) and removes the directory. */
export async function removeSandboxDirs(dir: string, scratch: boolean): Promise<void> {
  if (scratch) await execFileP("umount", [dir]).catch(() => execFileP("umount", ["-l", dir]).catch(() => undefined));
  await fsp.rm(dir, { recursive: true, force: true }).catch(() => undefined);
}

/** The sandbox's /etc/passwd: root, its user (a build's user is root itself), nobody. */
function passwd(uid: number): string {
  const user = uid === 0 ? "" : `user:x:${uid}:${uid}:sandbox user:/workspace:/bin/bash\n`;
  return `root:x:0:0:root:/root:/usr/sbin/nologin\n${user}nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`;
}
function group(uid: number): string {
  return `root:x:0:\n${uid === 0 ? "" : `user:x:${uid}:\n`}nogroup:x:65534:\n`;
}

/**
 * The host tools that run with privilege around a sandbox, named by absolute host path and run in
 * the engine's own mount namespace, before anything enters the sandbox's. A program resolved
 * through a sandbox's root (a custom template's is written by its build; a build's by its own
 * steps) could have been replaced there, and so could the libraries and the /etc/ld.so.preload its
 * dynamic loader reads: inside a sandbox nothing is executed until every privilege is gone, and
 * nothing that enforces a limit comes from the sandbox's own tree.
 */
export const HOST_TOOLS = {
  setpriv: "/usr/bin/setpriv",
  prlimit: "/usr/bin/prlimit",
  nsenter: "/usr/bin/nsenter",
} as const;

/**
 * Where a cgroup controller is missing, per-process rlimits stand in: address space for memory,
 * and RLIMIT_NPROC, which counts per host uid and so per sandbox, for the pids cap. The host's
 * prlimit sets them before the sandbox is entered; whatever runs inside inherits them.
 */
function rlimitFallback(host: Host, spec: SandboxSpec): string[] {
  const cg = host.isolation.cgroups;
  const flags: string[] = [];
  if (!cg.memory) flags.push(`--as=${spec.limits.memoryBytes}`);
  if (!cg.pids) flags.push(`--nproc=${spec.limits.pidsMax}`);
  return flags.length ? [HOST_TOOLS.prlimit, ...flags, "--"] : [];
}
function hosts(id: string): string {
  return `127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\t${hostname(id)}\n`;
}
export function hostname(id: string): string {
  return `sbx-${id.slice(4, 14).toLowerCase()}`;
}

/**
 * Runs as pid 1 inside the sandbox. The kernel drops signals from inside a pid namespace to its
 * init unless it handles them, so `kill -9 -1` in the sandbox cannot take it down; `wait` (dash's
 * wait3 loop) also reaps adopted orphans while it waits on its sleeping child.
 */
const RESIDENT_INIT = 'trap "" HUP INT QUIT TERM USR1 USR2 PIPE; while :; do /bin/sleep 2147483647 & wait $!; done';

export const ETC_RO = [
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "alternatives",
  "ssl",
  "ca-certificates",
  "nsswitch.conf",
  "localtime",
  "mime.types",
  "debian_version",
  "os-release",
  "bash.bashrc",
  "profile",
  "inputrc",
  "gai.conf",
  "protocols",
  "services",
  "host.conf",
  "terminfo",
  "magic",
  "python3",
  "python3.11",
];

/**
 * A running sandbox: a bubblewrap process tree in its own namespaces, attached to its cgroups
 * before its first instruction runs (bwrap --info-fd / --block-fd).
 */
export class SandboxProcess {
  private exitListeners: ((reason: string) => void)[] = [];
  exited = false;

  private constructor(
    readonly spec: SandboxSpec,
    /** What keeps the sandbox alive: its holder (runtime/holder.ts), or bwrap itself as the engine's child. */
    private readonly keeper: Keeper,
    /** Host pid of the sandbox's init (pid 1 inside), the process exec joins. */
    readonly targetPid: number,
    readonly cgroup: SandboxCgroup,
    private readonly mode: "bwrap-userns" | "bwrap-root",
    private readonly rlimits: string[],
    /** The filter bwrap gave the init; whatever enters the sandbox later loads it too (entry()). */
    readonly seccomp: SeccompFilter | null,
    /** A build's socket to its step agent (spec.agent): requests out, answers in. */
    readonly agentIo: (Readable & Writable) | null,
    /** The adoption record a restarted engine reads (null: this sandbox dies with the engine). */
    private record: { root: string; rec: HolderRecord } | null,
  ) {
    keeper.onExit((reason) => {
      this.exited = true;
      for (const l of this.exitListeners) l(reason);
    });
  }

  /**
   * The process whose life bounds this sandbox's host-side state (its nftables table is named
   * after it, see network.ts): its holder, or the engine itself for a sandbox that dies with it.
   */
  get ownerPid(): number {
    return this.record?.rec.holderPid ?? process.pid;
  }

  /** The engine root's holders directory, for files that belong to this sandbox's host side. */
  get holderRoot(): string | null {
    return this.record?.root ?? null;
  }

  /** Whether a restarted engine can take this sandbox over (it runs under a holder). */
  get survivesEngine(): boolean {
    return this.record !== null;
  }

  /**
   * Remembers a helper process outside the sandbox's namespaces (slirp4netns) in the adoption
   * record, by pid and start time, so a restarted engine can find it again and never mistakes
   * another process that got the same pid for it.
   */
  recordHelper(name: string, pid: number): void {
    if (!this.record) return;
    const start = procStartTime(pid);
    if (!start) return;
    this.record.rec.helpers = [...this.record.rec.helpers.filter((h) => h.name !== name), { name, pid, start }];
    writeRecord(this.record.root, this.record.rec);
  }

  /** Writes the adoption record again, after the spec changed (a pool member's claim sets its env). */
  saveRecord(): void {
    if (this.record) writeRecord(this.record.root, { ...this.record.rec, spec: this.spec });
  }

  /** A helper recorded before a restart, if it is still the same process. */
  helper(name: string): number | null {
    const h = this.record?.rec.helpers.find((x) => x.name === name);
    return h && sameProcess(h.pid, h.start) ? h.pid : null;
  }

  onExit(listener: (reason: string) => void): void {
    if (this.exited) listener("sandbox init already exited");
    else this.exitListeners.push(listener);
  }

  /**
   * Takes over a sandbox an earlier engine process started, from its adoption record. Every
   * identity is checked before anything is trusted: the holder answers on its socket with the pid
   * and child recorded, the holder's and the init's start times match (a reused pid starts later),
   * the init is still the holder's bwrap's child and a member of the sandbox's cgroup. Throws one
   * sentence saying why the sandbox cannot be adopted.
   */
  static async adopt(host: Host, id: string, cgroup: SandboxCgroup): Promise<SandboxProcess> {
    if (!host.holder) throw new Error("this engine runs sandboxes without holders, so none can be adopted");
    const root = host.holder.root;
    const rec = readRecord(root, id);
    if (!rec) throw new Error("no adoption record: its processes died with the earlier engine process");
    const note = exitNote(root, id);
    if (!sameProcess(rec.holderPid, rec.holderStart))
      throw new Error(`its processes ended while the engine was down (${exitReason(note)})`);
    let link: HolderLink;
    try {
      link = await HolderLink.connect(holderSocket(root, id));
    } catch (e) {
      throw new Error(`its holder does not answer (${(e as Error).message})`);
    }
    const fail = (why: string) => {
      link.kill();
      return new Error(why);
    };
    if (link.holderPid !== rec.holderPid || link.childPid !== rec.childPid)
      throw fail("another process answers on its holder socket");
    if (!sameProcess(rec.initPid, rec.initStart) || procParent(rec.initPid) !== rec.childPid)
      throw fail("its init process is gone");
    if (host.isolation.cgroups.version !== "none" && !cgroup.pids().includes(rec.initPid))
      throw fail("its init process is not in its cgroup");
    const spec = rec.spec as SandboxSpec;
    return new SandboxProcess(spec, link, rec.initPid, cgroup, rec.mode, rec.rlimits, host.seccomp, null, {
      root,
      rec,
    });
  }

  static async start(host: Host, spec: SandboxSpec, cgroup: SandboxCgroup): Promise<SandboxProcess> {
    const mode = host.isolation.mode;
    if (mode === "unavailable" || !host.bwrap)
      throw new Error("sandboxing unavailable on this machine (see limits.isolation)");
    const dirs = sandboxDirs(spec.dir);
    const args: string[] = [];
    if (mode === "bwrap-userns") {
      args.push(
        "--unshare-user",
        "--uid",
        String(spec.build ? 0 : INNER_UID),
        "--gid",
        String(spec.build ? 0 : INNER_UID),
        "--disable-userns",
      );
    }
    // A build's uid 0 is root of its own user namespace only: it keeps no capability even there.
    // (bwrap-root drops every capability itself when it changes to the build's uid, and refuses
    // --cap-drop from a caller that is not root.)
    if (spec.build && mode === "bwrap-userns") args.push("--cap-drop", "ALL");
    args.push(
      "--unshare-pid",
      "--unshare-ipc",
      "--unshare-uts",
      "--unshare-cgroup-try",
      "--unshare-net",
      "--hostname",
      hostname(spec.id),
      "--die-with-parent",
      "--new-session",
      "--as-pid-1",
      "--info-fd",
      "3",
      "--block-fd",
      "4",
    );
    // The syscall filter (runtime/seccomp.ts), installed by bwrap right before it execs the init,
    // so every descendant inherits it (a build's steps too: they are the init's children).
    if (host.seccomp) args.push("--seccomp", String(BWRAP_SECCOMP_FD));
    // A custom template brings its whole root filesystem (runtime/layers.ts); else the host userland, piece by piece.
    if (spec.rootfs) args.push(spec.rootfs.writable ? "--bind" : "--ro-bind", spec.rootfs.path, "/");
    else
      args.push(
        "--ro-bind",
        "/usr",
        "/usr",
        "--symlink",
        "usr/bin",
        "/bin",
        "--symlink",
        "usr/sbin",
        "/sbin",
        "--symlink",
        "usr/lib",
        "/lib",
      );
    if (!spec.rootfs && fs.existsSync("/usr/lib64")) args.push("--symlink", "usr/lib64", "/lib64");
    if (!spec.rootfs && fs.existsSync("/usr/lib32")) args.push("--symlink", "usr/lib32", "/lib32");
    for (const name of spec.rootfs ? [] : ETC_RO) {
      const p = `/etc/${name}`;
      if (fs.existsSync(p)) args.push("--ro-bind", p, p);
    }
    // Identity and name files come from the engine, not the host (fds 5-8 below).
    args.push(
      "--ro-bind-data",
      "5",
      "/etc/passwd",
      "--ro-bind-data",
      "6",
      "/etc/group",
      "--ro-bind-data",
      "7",
      "/etc/hosts",
      "--ro-bind-data",
      "8",
      "/etc/resolv.conf",
    );
    for (const b of spec.rootfs ? [] : spec.image.binds) args.push("--ro-bind", host.runtimeSource(b), b.dest);
    args.push("--proc", "/proc", ...procMaskArgs(host.procMasks), "--dev", "/dev");
    args.push("--bind", dirs.tmp, "/tmp", "--bind", dirs.workspace, "/workspace");
    if (spec.agent) args.push("--ro-bind", spec.agent.ctl, spec.agent.dest);
    for (const b of spec.binds ?? []) args.push("--bind", b.src, b.dest);
    args.push("--chdir", "/workspace", "--clearenv");
    // The init needs no environment of the caller's: commands get spec.env applied inside, once
    // nothing is privileged (sandbox-command.ts). Nothing caller-chosen may reach a process that still has root.
    args.push("--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", "/workspace");
    if (!spec.rootfs?.writable) args.push("--remount-ro", "/");
    // The sandbox's init (pid 1 of its pid namespace, so nothing inside can kill it): it holds the
    // namespaces open for exec to join, and its wait reaps the orphans that commands leave behind.
    // bwrap takes the options above from BWRAP_ARGS_FD and only the command from its arguments.
    const init = ["--", "/bin/sh", "-c", spec.agent?.init ?? RESIDENT_INIT];

    // Who starts bwrap decides who the init is; its first instruction already runs without privilege.
    // - user namespaces: bwrap runs as the sandbox's (or build's) host uid (Node's spawn or setpriv
    //   sets it), unprivileged on the host.
    // - bwrap-root: bwrap runs with that uid as its real uid and root as its effective one, its
    //   setuid mode: it mounts as root, creates mount points as that uid (a custom template's tree
    //   cannot point them at the host) and drops to it, without capabilities and with
    //   no_new_privs, before it executes anything in the sandbox's root.
    // A build is no exception: its root is root of its own user namespace only (or, without user
    // namespaces, it is not root at all), never the host's uid 0, whose uid alone lets a process
    // write kernel state such as /proc/sys without any capability.
    const userUid = mode === "bwrap-userns" ? (spec.build ? 0 : INNER_UID) : spec.uid;
    const files = [
      passwd(userUid),
      group(userUid),
      hosts(spec.id),
      spec.network === "open" ? "nameserver 10.0.2.3\n" : "",
    ];
    const rlimits = rlimitFallback(host, spec);
    // Sandboxes run under a holder (runtime/holder.ts) and outlive the engine; builds do not (their
    // steps are driven through the agent socket, which dies with the engine anyway).
    const holder = host.holder && !spec.agent && !spec.build ? host.holder : null;
    const sock = holder ? holderSocket(holder.root, spec.id) : null;
    if (holder) removeRecord(holder.root, spec.id);
    // The holder stays root (it owns a root-only socket); the sandbox uid is then set by setpriv
    // instead of by Node's spawn, with the same effect (no groups, real and effective uid and gid).
    const userns = mode === "bwrap-userns";
    const launch = [
      // The holder's socket is named by environment, not argument (baton-holder.c socket_path).
      ...(holder && sock ? [holder.bin, "-"] : []),
      ...rlimits,
      ...(holder && userns
        ? [HOST_TOOLS.setpriv, `--reuid=${spec.uid}`, `--regid=${spec.uid}`, "--clear-groups", "--"]
        : []),
      ...(mode === "bwrap-root"
        ? [HOST_TOOLS.setpriv, `--ruid=${spec.uid}`, `--rgid=${spec.uid}`, "--clear-groups", "--"]
        : []),
      host.bwrap,
      "--args",
      String(BWRAP_ARGS_FD),
      ...init,
    ];
    // fd 9: a build's agent socket; fd 10: the seccomp program bwrap reads (BWRAP_SECCOMP_FD);
    // fd 11: bwrap's arguments (BWRAP_ARGS_FD).
    const filterFd = openFilter(host.seccomp);
    let child: ChildProcess;
    try {
      child = spawn(launch[0]!, launch.slice(1), {
        stdio: [
          "ignore",
          "ignore",
          "pipe",
          "pipe",
          "pipe",
          "pipe",
          "pipe",
          "pipe",
          "pipe",
          spec.agent ? "pipe" : "ignore",
          filterFd,
          "pipe",
        ],
        ...(userns && !holder ? { uid: spec.uid, gid: spec.uid } : {}),
        // Its own session: a Ctrl-C meant for the engine's terminal never reaches a holder.
        detached: holder !== null,
        env: holder && sock ? { BATON_HOLDER_SOCKET: sock } : {},
      });
    } finally {
      closeFilter(filterFd);
    }
    const stdio = child.stdio as unknown as (Readable & Writable)[];
    // bwrap closes its ends of these pipes whenever it is done with them; that is not an error.
    for (const s of stdio) s?.on("error", () => undefined);
    let stderr = "";
    child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()).slice(-4000));
    files.forEach((content, i) => stdio[5 + i]!.end(content));
    stdio[BWRAP_ARGS_FD]!.end(args.map((a) => `${a}\0`).join(""));

    const exited = new Promise<never>((_, reject) => {
      child.once("exit", (code, signal) =>
        reject(new Error(`bwrap exited during start (${signal ?? code}): ${stderr.trim() || "no output"}`)),
      );
      child.once("error", (e) => reject(e));
    });
    try {
      const info = await Promise.race([
        readInfo(stdio[3]!),
        exited,
        timeout(10_000, "bwrap did not report its child pid within 10 s"),
      ]);
      const initPid = info["child-pid"];
      // Join the cgroups before the sandbox runs a single instruction of its own.
      try {
        cgroup.attach(initPid);
      } catch (e) {
        await sleep(50);
        throw new Error(`${(e as Error).message} (bwrap: ${stderr.trim() || "no output"})`);
      }
      stdio[4]!.end("x");
      await Promise.race([
        waitForExec(initPid, "sh"),
        exited,
        timeout(10_000, "sandbox init did not start within 10 s"),
      ]);
      child.stderr?.removeAllListeners("data");
      if (!holder || !sock)
        return new SandboxProcess(
          spec,
          childKeeper(child),
          initPid,
          cgroup,
          mode,
          rlimits,
          host.seccomp,
          spec.agent ? stdio[9]! : null,
          null,
        );
      const link = await HolderLink.connect(sock);
      const rec: HolderRecord = {
        v: 1,
        id: spec.id,
        holderPid: link.holderPid,
        holderStart: procStartTime(link.holderPid) ?? "",
        initPid,
        initStart: procStartTime(initPid) ?? "",
        childPid: link.childPid,
        mode,
        rlimits,
        spec,
        helpers: [],
      };
      if (link.holderPid !== child.pid || procParent(initPid) !== link.childPid)
        throw new Error("the sandbox holder reported other processes than it started");
      writeRecord(holder.root, rec);
      // The engine no longer waits on the holder: Node still reaps it should it exit while we run.
      child.unref();
      for (const s of stdio) if (s && s !== stdio[2]) s.destroy();
      return new SandboxProcess(spec, link, initPid, cgroup, mode, rlimits, host.seccomp, null, {
        root: holder.root,
        rec,
      });
    } catch (e) {
      child.kill("SIGKILL");
      await cgroup.destroy().catch(() => undefined);
      if (holder) removeRecord(holder.root, spec.id);
      throw e;
    }
  }

  /**
   * The host-side command (argv up to the sandbox-side program) that runs a program inside this
   * sandbox as its user: [prlimit] → nsenter into every namespace of the init, switching to the
   * sandbox user, in its working directory → the static seccomp loader (or, with no filter, setpriv
   * before nsenter). Every binary until the loader is a host one, run in the engine's mount
   * namespace; the loader is a host file too, executed through /proc/self/fd (the caller opened it
   * as fd SECCOMP_FD and the program as SECCOMP_FD - 1, see sandbox-command.ts), so nothing of the
   * sandbox's tree (a template can replace its setpriv, prlimit or ld.so.preload) runs before
   * privilege is gone: the uid change clears the capabilities, and the loader sets no_new_privs,
   * empties the bounding, inheritable and ambient sets and installs the filter before it executes
   * the program from the sandbox's root.
   *
   * Never for a build: its user is uid 0 of its user namespace and stays uid 0, and root keeps every
   * capability of the namespace it enters across an exec. Its steps are its init's children (spec.agent).
   */
  entry(): string[] {
    if (this.spec.build) throw new Error("nothing enters a build sandbox: its steps run through its init (spec.agent)");
    const user = this.mode === "bwrap-userns" ? String(INNER_UID) : String(this.spec.uid);
    const nsenter = [HOST_TOOLS.nsenter, "-t", String(this.targetPid), "-a", "-S", user, "-G", user, "-w", "--"];
    if (this.seccomp)
      return [...this.rlimits, ...nsenter, `/proc/self/fd/${SECCOMP_FD}`, "enter", String(SECCOMP_FD - 1)];
    return [...this.rlimits, HOST_TOOLS.setpriv, "--no-new-privs", "--", ...nsenter];
  }

  async kill(): Promise<void> {
    await this.cgroup.destroy().catch(() => undefined);
    if (!this.exited) {
      // SIGKILL to the init of the sandbox's pid namespace ends every process in it. Without cgroups
      // this is the only handle on them: killing bwrap alone is not enough where the uid changed
      // (bwrap-root), as that cleared the parent-death signal bwrap gave the init. While bwrap
      // lives it has not reaped the init, so the pid cannot have been reused.
      try {
        process.kill(this.targetPid, "SIGKILL");
      } catch {
        /* already gone */
      }
      this.keeper.kill();
      await this.keeper.wait(5000);
    }
    if (this.record) removeRecord(this.record.root, this.spec.id);
  }
}

/** What keeps a sandbox's processes: its holder (HolderLink) or bwrap as the engine's own child. */
interface Keeper {
  onExit(listener: (reason: string) => void): void;
  /** SIGKILL to bwrap. */
  kill(): void;
  /** Resolves once it is gone, or after `ms`. */
  wait(ms: number): Promise<void>;
}

function childKeeper(bwrap: ChildProcess): Keeper {
  let reason: string | null = null;
  const listeners: ((reason: string) => void)[] = [];
  bwrap.once("exit", (code, signal) => {
    reason = signal ? `sandbox init killed by ${signal}` : `sandbox init exited with code ${code}`;
    for (const l of listeners) l(reason);
  });
  return {
    onExit: (l) => (reason !== null ? l(reason) : void listeners.push(l)),
    kill: () => void bwrap.kill("SIGKILL"),
    wait: (ms) =>
      new Promise<void>((r) => {
        if (reason !== null) return r();
        const t = setTimeout(r, ms);
        bwrap.once("exit", () => {
          clearTimeout(t);
          r();
        });
      }),
  };
}

function timeout(ms: number, message: string): Promise<never> {
  return new Promise((_, reject) => setTimeout(() => reject(new Error(message)), ms).unref());
}

function readInfo(stream: Readable): Promise<{ "child-pid": number }> {
  return new Promise((resolve, reject) => {
    let buf = "";
    const onData = (d: Buffer) => {
      buf += d.toString();
      const m = buf.match(/"child-pid"\s*:\s*(\d+)/);
      if (m) {
        stream.off("data", onData);
        resolve({ "child-pid": Number(m[1]) });
      }
    };
    stream.on("data", onData);
    stream.once("error", reject);
  });
}

/** Waits until bwrap has set everything up and exec'd the init, so nsenter sees the final mounts. */
async function waitForExec(pid: number, comm: string): Promise<void> {
  for (;;) {
    const current = (await fsp.readFile(`/proc/${pid}/comm`, "utf8").catch(() => "")).trim();
    if (current === comm) return;
    await sleep(1);
  }
}
