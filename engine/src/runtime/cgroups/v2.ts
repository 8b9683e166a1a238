import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { holdFrozen, liveSiblings, readNum, readStat, rmdirRetry, tryWrite, waitFor } from "./shared.js";
import type { CgroupDriver, CgroupLimits, CgroupReading, CgroupSupport, SandboxCgroup } from "./types.js";

/** cgroup v2: one unified hierarchy, delegated to the engine below its own cgroup. */

export class V2Driver implements CgroupDriver {
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
  adopt(id: string): SandboxCgroup | null {
    const dir = path.join(this.parent, id);
    return fs.existsSync(dir) ? new V2Cgroup(dir, this.support) : null;
  }
  existing(): string[] {
    try {
      return fs
        .readdirSync(this.parent, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name);
    } catch {
      return [];
    }
  }
  async cleanup(): Promise<void> {
    await rmdirRetry(this.parent).catch(() => undefined);
  }
  otherEnginesAlive(): boolean {
    return liveSiblings(path.dirname(this.parent), path.basename(this.parent)).length > 0;
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
