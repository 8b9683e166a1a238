import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { sleep } from "../../lib/time.js";
import { holdFrozen, liveSiblings, readNum, readStat, rmdirRetry, tryWrite, waitFor } from "./shared.js";
import type { CgroupDriver, CgroupLimits, CgroupReading, CgroupSupport, SandboxCgroup } from "./types.js";

/** cgroup v1: one hierarchy per controller, so a sandbox has one group in each. */

export const V1_CONTROLLERS = ["memory", "cpu", "cpuacct", "freezer", "pids"] as const;
export type V1Controller = (typeof V1_CONTROLLERS)[number];

export class V1Driver implements CgroupDriver {
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
  adopt(id: string): SandboxCgroup | null {
    const groups = new Map<V1Controller, string>();
    for (const [c, parent] of this.dirs) {
      const dir = path.join(parent, id);
      if (fs.existsSync(dir)) groups.set(c, dir);
    }
    return groups.size ? new V1Cgroup(groups) : null;
  }
  existing(): string[] {
    const ids = new Set<string>();
    for (const parent of this.dirs.values()) {
      try {
        for (const d of fs.readdirSync(parent, { withFileTypes: true })) if (d.isDirectory()) ids.add(d.name);
      } catch {
        /* parent gone */
      }
    }
    return [...ids];
  }
  async cleanup(): Promise<void> {
    for (const parent of this.dirs.values()) await rmdirRetry(parent).catch(() => undefined);
  }
  otherEnginesAlive(): boolean {
    const parent = [...this.dirs.values()][0];
    return parent ? liveSiblings(path.dirname(parent), path.basename(parent)).length > 0 : false;
  }
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
