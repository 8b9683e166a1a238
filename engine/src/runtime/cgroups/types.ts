/** What a sandbox's cgroups are asked for, read from, and what the machine supports (one interface, three drivers). */

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

export interface CgroupDriver {
  support: CgroupSupport;
  /** Whether another live engine keeps its groups beside ours (shared host state must stay). */
  otherEnginesAlive(): boolean;
  create(id: string, limits: CgroupLimits): Promise<SandboxCgroup>;
  /** The existing groups of sandbox `id` (left by an earlier engine process of this data dir), or null. */
  adopt(id: string): SandboxCgroup | null;
  /** Ids of every sandbox group under the engine's parent (boot reconciliation). */
  existing(): string[];
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
