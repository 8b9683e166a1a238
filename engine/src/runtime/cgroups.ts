import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { sleep } from "../lib/time.js";

/**
 * Per-sandbox resource control through the kernel's cgroups, v1 (one hierarchy per controller)
 * or v2 (unified). The engine nests its groups under its own cgroup path so it never touches
 * groups it does not own, and removes them on terminate and at shutdown.
 */

export interface CgroupLimits {
  memoryBytes: number;
  cpu: number;
  pidsMax: number;
}

export interface CgroupReading {
  /** Cumulative on-CPU nanoseconds. */
  cpuNs: number;
  /** Working set: usage minus inactive file cache (what the kernel could reclaim). */
  workingSetBytes: number;
  oomKills: number;
  pids: number;
}

export interface CgroupSupport {
  version: "v1" | "v2" | "none";
  memory: boolean;
  cpu: boolean;
  cpuacct: boolean;
  pids: boolean;
  freezer: boolean;
  reason?: string;
}

const ROOT = "/sys/fs/cgroup";
const V1_CONTROLLERS = ["memory", "cpu", "cpuacct", "freezer", "pids"] as const;
type V1Controller = (typeof V1_CONTROLLERS)[number];

function ownCgroupPaths(): Map<string, string> {
  const map = new Map<string, string>();
  try {
    for (const line of fs.readFileSync("/proc/self/cgroup", "utf8").split("\n")) {
      const [, ctrls, p] = line.split(":");
      if (ctrls === undefined || p === undefined) continue;
      for (const c of ctrls.split(",")) map.set(c, p);
    }
  } catch {
    /* no /proc: no cgroups */
  }
  return map;
}

function tryWrite(file: string, value: string): boolean {
  try {
    fs.writeFileSync(file, value);
    return true;
  } catch {
    return false;
  }
}

async function rmdirRetry(dir: string): Promise<void> {
  // rmdir is EBUSY for a few ms after the last task exits (engine-notes §3).
  for (let i = 0; i < 50; i++) {
    try {
      await fsp.rmdir(dir);
      return;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return;
      if (code !== "EBUSY") throw e;
      await sleep(5);
    }
  }
}

export interface CgroupDriver {
  support: CgroupSupport;
  /** Whether another live engine keeps its groups beside ours (shared host state must stay). */
  otherEnginesAlive(): boolean;
  create(id: string, limits: CgroupLimits): Promise<SandboxCgroup>;
  /** Removes the engine's parent groups if empty (shutdown). */
  cleanup(): Promise<void>;
}

export interface SandboxCgroup {
  /** cgroup.procs files a process must be written into to join every controller. */
  procsFiles: string[];
  attach(pid: number): void;
  read(): CgroupReading;
  /** How many tasks the group holds: read().pids alone, for callers that must not pay for memory.stat. */
  taskCount(): number;
  freeze(): Promise<boolean>;
  thaw(): Promise<boolean>;
  /**
   * Runs `fn` with every task frozen (so none can fork meanwhile), leaving a sandbox that was
   * already paused paused. Without a freezer it runs `fn` a few times instead.
   */
  whileFrozen(fn: () => number): Promise<void>;
  pids(): number[];
  /** Kills every task (freeze first so nothing forks during the kill) and removes the groups. */
  destroy(): Promise<void>;
  setCpu(cpu: number): void;
}

/**
 * Groups left by an engine that died without cleaning up (SIGKILL, power loss): any sibling
 * `baton-<pid>` whose engine process is gone. Their tasks are killed and the groups removed.
 */
function liveSiblings(parentOfParents: string): number[] {
  try {
    return fs
      .readdirSync(parentOfParents)
      .filter((n) => /^baton-\d+$/.test(n))
      .map((n) => Number(n.slice("baton-".length)))
      .filter((pid) => pid !== process.pid && fs.existsSync(`/proc/${pid}`));
  } catch {
    return [];
  }
}

function reapStale(parentOfParents: string): void {
  let names: string[] = [];
  try {
    names = fs.readdirSync(parentOfParents).filter((n) => /^baton-\d+$/.test(n));
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(name.slice("baton-".length));
    if (pid === process.pid || fs.existsSync(`/proc/${pid}`)) continue;
    const dir = path.join(parentOfParents, name);
    for (const child of fs.readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory())) {
      const group = path.join(dir, child.name);
      try {
        for (const task of fs.readFileSync(path.join(group, "cgroup.procs"), "utf8").split("\n").filter(Boolean)) {
          try {
            process.kill(Number(task), "SIGKILL");
          } catch {
            /* gone */
          }
        }
        tryWrite(path.join(group, "freezer.state"), "THAWED");
        fs.rmdirSync(group);
      } catch {
        /* still busy: left for the next start */
      }
    }
    try {
      fs.rmdirSync(dir);
    } catch {
      /* not empty yet */
    }
  }
}

/** Detects what this machine lets the engine control, by really creating a test group. */
export function detectCgroups(instance: string): CgroupDriver {
  const own = ownCgroupPaths();
  const v1Dirs = new Map<V1Controller, string>();
  for (const c of V1_CONTROLLERS) {
    const mount = path.join(ROOT, c);
    if (!fs.existsSync(path.join(mount, "cgroup.procs"))) continue;
    const parent = path.join(mount, own.get(c) ?? "/", `baton-${instance}`);
    reapStale(path.dirname(parent));
    try {
      fs.mkdirSync(parent, { recursive: true });
      const probe = path.join(parent, "probe");
      fs.mkdirSync(probe);
      fs.rmdirSync(probe);
      v1Dirs.set(c, parent);
    } catch {
      /* controller not writable here */
    }
  }
  if (v1Dirs.size > 0) return new V1Driver(v1Dirs);
  const unified = fs.existsSync(path.join(ROOT, "cgroup.controllers")) ? ROOT : path.join(ROOT, "unified");
  if (fs.existsSync(path.join(unified, "cgroup.controllers"))) {
    const parent = path.join(unified, own.get("") ?? "/", `baton-${instance}`);
    reapStale(path.dirname(parent));
    try {
      fs.mkdirSync(parent, { recursive: true });
      const avail = fs.readFileSync(path.join(parent, "cgroup.controllers"), "utf8").trim().split(/\s+/);
      const wanted = ["memory", "cpu", "pids"].filter((c) => avail.includes(c));
      tryWrite(path.join(parent, "cgroup.subtree_control"), wanted.map((c) => `+${c}`).join(" "));
      const enabled = fs.readFileSync(path.join(parent, "cgroup.subtree_control"), "utf8").trim().split(/\s+/);
      if (enabled.includes("memory") || enabled.includes("cpu") || enabled.includes("pids"))
        return new V2Driver(parent, enabled);
      fs.rmdirSync(parent);
    } catch {
      /* v2 not delegated to us */
    }
  }
  return new NoCgroups("neither a writable cgroup v1 controller nor a delegated cgroup v2 subtree was found");
}

export function noCgroups(reason: string): CgroupDriver {
  return new NoCgroups(reason);
}

class V1Driver implements CgroupDriver {
  support: CgroupSupport;
  constructor(private dirs: Map<V1Controller, string>) {
    this.support = {
      version: "v1",
      memory: dirs.has("memory"),
      cpu: dirs.has("cpu"),
      cpuacct: dirs.has("cpuacct"),
      pids: dirs.has("pids"),
      freezer: dirs.has("freezer"),
    };
  }
  async create(id: string, limits: CgroupLimits): Promise<SandboxCgroup> {
    const groups = new Map<V1Controller, string>();
    for (const [c, parent] of this.dirs) {
      const dir = path.join(parent, id);
      await fsp.mkdir(dir, { recursive: true });
      groups.set(c, dir);
    }
    const g = (c: V1Controller) => groups.get(c);
    const mem = g("memory");
    if (mem) {
      fs.writeFileSync(path.join(mem, "memory.limit_in_bytes"), String(limits.memoryBytes));
      // No swap on these hosts, but where there is, memsw keeps the limit honest.
      tryWrite(path.join(mem, "memory.memsw.limit_in_bytes"), String(limits.memoryBytes));
    }
    const pids = g("pids");
    if (pids) fs.writeFileSync(path.join(pids, "pids.max"), String(limits.pidsMax));
    const cg = new V1Cgroup(groups);
    cg.setCpu(limits.cpu);
    return cg;
  }
  async cleanup(): Promise<void> {
    for (const parent of this.dirs.values()) await rmdirRetry(parent).catch(() => undefined);
  }
  otherEnginesAlive(): boolean {
    const parent = [...this.dirs.values()][0];
    return parent ? liveSiblings(path.dirname(parent)).length > 0 : false;
  }
}

function readNum(file: string): number {
  try {
    return Number(fs.readFileSync(file, "utf8").trim()) || 0;
  } catch {
    return 0;
  }
}

function readStat(file: string): Map<string, number> {
  const m = new Map<string, number>();
  try {
    for (const line of fs.readFileSync(file, "utf8").split("\n")) {
      const [k, v] = line.split(" ");
      if (k && v) m.set(k, Number(v));
    }
  } catch {
    /* group gone */
  }
  return m;
}

/** whileFrozen for either cgroup version: one counted freeze hold around `fn`. */
async function holdFrozen(
  cg: Pick<SandboxCgroup, "freeze" | "thaw">,
  hasFreezer: boolean,
  fn: () => number,
): Promise<void> {
  if (!hasFreezer) return sweepRepeatedly(fn);
  const frozen = await cg.freeze().catch(() => false);
  try {
    if (frozen) fn();
    else await sweepRepeatedly(fn);
  } finally {
    if (frozen) await cg.thaw().catch(() => undefined);
  }
}

/** Without a freezer: sweep until a pass finds nothing (bounded), so forks made during a pass are caught by the next. */
async function sweepRepeatedly(fn: () => number): Promise<void> {
  for (let i = 0; i < 20 && fn() > 0; i++) await sleep(5);
}

async function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await sleep(2);
  }
  return check();
}

class V1Cgroup implements SandboxCgroup {
  procsFiles: string[];
  /**
   * Freezes are counted: a pause holds one until resume, a sweep holds one briefly, and the group
   * thaws only when the last hold is released, so a sweep can never thaw a paused sandbox.
   */
  private holds = 0;
  constructor(private groups: Map<V1Controller, string>) {
    this.procsFiles = [...groups.values()].map((d) => path.join(d, "cgroup.procs"));
  }
  attach(pid: number): void {
    for (const f of this.procsFiles) fs.writeFileSync(f, String(pid));
  }
  setCpu(cpu: number): void {
    const dir = this.groups.get("cpu");
    if (!dir) return;
    fs.writeFileSync(path.join(dir, "cpu.cfs_period_us"), "100000");
    fs.writeFileSync(path.join(dir, "cpu.cfs_quota_us"), String(Math.round(cpu * 100_000)));
  }
  read(): CgroupReading {
    const acct = this.groups.get("cpuacct");
    const mem = this.groups.get("memory");
    let workingSet = 0;
    let oom = 0;
    if (mem) {
      const usage = readNum(path.join(mem, "memory.usage_in_bytes"));
      const stat = readStat(path.join(mem, "memory.stat"));
      workingSet = Math.max(0, usage - (stat.get("total_inactive_file") ?? 0));
      oom = readStat(path.join(mem, "memory.oom_control")).get("oom_kill") ?? 0;
    }
    return {
      cpuNs: acct ? readNum(path.join(acct, "cpuacct.usage")) : 0,
      workingSetBytes: workingSet,
      oomKills: oom,
      pids: this.taskCount(),
    };
  }
  taskCount(): number {
    const pids = this.groups.get("pids");
    return pids ? readNum(path.join(pids, "pids.current")) : this.pids().length;
  }
  /** Takes a freeze hold; false (and no hold) when the group would not freeze within 2 s. */
  async freeze(): Promise<boolean> {
    const dir = this.groups.get("freezer");
    if (!dir) return false;
    const state = path.join(dir, "freezer.state");
    this.holds++;
    // A task caught mid-fork can leave the group FREEZING; writing FROZEN again retries the
    // freeze over the new task (v1 freezer semantics), so keep asking until it settles.
    fs.writeFileSync(state, "FROZEN");
    const frozen = await waitFor(() => {
      if (fs.readFileSync(state, "utf8").trim() === "FROZEN") return true;
      fs.writeFileSync(state, "FROZEN");
      return false;
    }, 2000);
    if (!frozen) await this.thaw();
    return frozen;
  }
  /** Releases a freeze hold; the group thaws when none is left. */
  async thaw(): Promise<boolean> {
    const dir = this.groups.get("freezer");
    if (!dir) return false;
    this.holds = Math.max(0, this.holds - 1);
    if (this.holds > 0) return true;
    return this.forceThaw(dir);
  }
  private forceThaw(dir: string): Promise<boolean> {
    fs.writeFileSync(path.join(dir, "freezer.state"), "THAWED");
    return waitFor(() => fs.readFileSync(path.join(dir, "freezer.state"), "utf8").trim() === "THAWED", 2000);
  }
  whileFrozen(fn: () => number): Promise<void> {
    return holdFrozen(this, this.groups.has("freezer"), fn);
  }
  pids(): number[] {
    const file = this.procsFiles[0];
    if (!file) return [];
    try {
      return fs.readFileSync(file, "utf8").split("\n").filter(Boolean).map(Number);
    } catch {
      return [];
    }
  }
  async destroy(): Promise<void> {
    const frozen = this.groups.has("freezer") ? await this.freeze().catch(() => false) : false;
    for (let round = 0; round < 200; round++) {
      const pids = this.pids();
      if (pids.length === 0) break;
      for (const pid of pids) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          /* already gone */
        }
      }
      // SIGKILL is delivered to frozen tasks once thawed: thaw whatever holds remain.
      const dir = this.groups.get("freezer");
      if (frozen && round === 0 && dir) {
        this.holds = 0;
        await this.forceThaw(dir).catch(() => undefined);
      }
      await sleep(5);
    }
    for (const dir of this.groups.values()) await rmdirRetry(dir);
  }
}

class V2Driver implements CgroupDriver {
  support: CgroupSupport;
  constructor(
    private parent: string,
    enabled: string[],
  ) {
    this.support = {
      version: "v2",
      memory: enabled.includes("memory"),
      cpu: enabled.includes("cpu"),
      cpuacct: true,
      pids: enabled.includes("pids"),
      freezer: fs.existsSync(path.join(parent, "cgroup.freeze")),
    };
  }
  async create(id: string, limits: CgroupLimits): Promise<SandboxCgroup> {
    const dir = path.join(this.parent, id);
    await fsp.mkdir(dir, { recursive: true });
    if (this.support.memory) {
      fs.writeFileSync(path.join(dir, "memory.max"), String(limits.memoryBytes));
      tryWrite(path.join(dir, "memory.swap.max"), "0");
    }
    if (this.support.pids) fs.writeFileSync(path.join(dir, "pids.max"), String(limits.pidsMax));
    const cg = new V2Cgroup(dir, this.support);
    cg.setCpu(limits.cpu);
    return cg;
  }
  async cleanup(): Promise<void> {
    await rmdirRetry(this.parent).catch(() => undefined);
  }
  otherEnginesAlive(): boolean {
    return liveSiblings(path.dirname(this.parent)).length > 0;
  }
}

class V2Cgroup implements SandboxCgroup {
  procsFiles: string[];
  constructor(
    private dir: string,
    private support: CgroupSupport,
  ) {
    this.procsFiles = [path.join(dir, "cgroup.procs")];
  }
  attach(pid: number): void {
    fs.writeFileSync(path.join(this.dir, "cgroup.procs"), String(pid));
  }
  setCpu(cpu: number): void {
    if (this.support.cpu) fs.writeFileSync(path.join(this.dir, "cpu.max"), `${Math.round(cpu * 100_000)} 100000`);
  }
  read(): CgroupReading {
    const cpu = readStat(path.join(this.dir, "cpu.stat"));
    const mem = readStat(path.join(this.dir, "memory.stat"));
    const events = readStat(path.join(this.dir, "memory.events"));
    const usage = readNum(path.join(this.dir, "memory.current"));
    return {
      cpuNs: (cpu.get("usage_usec") ?? 0) * 1000,
      workingSetBytes: Math.max(0, usage - (mem.get("inactive_file") ?? 0)),
      oomKills: events.get("oom_kill") ?? 0,
      pids: this.taskCount(),
    };
  }
  taskCount(): number {
    return readNum(path.join(this.dir, "pids.current"));
  }
  /** Counted like V1Cgroup's: the group thaws only when the last hold is released. */
  private holds = 0;
  async freeze(): Promise<boolean> {
    if (!this.support.freezer) return false;
    this.holds++;
    fs.writeFileSync(path.join(this.dir, "cgroup.freeze"), "1");
    const frozen = await waitFor(() => (readStat(path.join(this.dir, "cgroup.events")).get("frozen") ?? 0) === 1, 2000);
    if (!frozen) await this.thaw();
    return frozen;
  }
  async thaw(): Promise<boolean> {
    if (!this.support.freezer) return false;
    this.holds = Math.max(0, this.holds - 1);
    if (this.holds > 0) return true;
    fs.writeFileSync(path.join(this.dir, "cgroup.freeze"), "0");
    return waitFor(() => (readStat(path.join(this.dir, "cgroup.events")).get("frozen") ?? 1) === 0, 2000);
  }
  whileFrozen(fn: () => number): Promise<void> {
    return holdFrozen(this, this.support.freezer, fn);
  }
  pids(): number[] {
    try {
      return fs.readFileSync(path.join(this.dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);
    } catch {
      return [];
    }
  }
  async destroy(): Promise<void> {
    if (!tryWrite(path.join(this.dir, "cgroup.kill"), "1")) {
      for (const pid of this.pids()) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          /* gone */
        }
      }
    }
    await waitFor(() => this.pids().length === 0, 2000);
    await rmdirRetry(this.dir);
  }
}

class NoCgroups implements CgroupDriver {
  support: CgroupSupport;
  constructor(reason: string) {
    this.support = { version: "none", memory: false, cpu: false, cpuacct: false, pids: false, freezer: false, reason };
  }
  async create(): Promise<SandboxCgroup> {
    return {
      procsFiles: [],
      attach: () => undefined,
      read: () => ({ cpuNs: 0, workingSetBytes: 0, oomKills: 0, pids: 0 }),
      taskCount: () => 0,
      freeze: async () => false,
      thaw: async () => false,
      whileFrozen: async () => undefined,
      pids: () => [],
      destroy: async () => undefined,
      setCpu: () => undefined,
    };
  }
  async cleanup(): Promise<void> {}
  otherEnginesAlive(): boolean {
    return false;
  }
}
