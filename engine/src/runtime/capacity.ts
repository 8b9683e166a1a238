import fs from "node:fs";
import path from "node:path";

/**
 * What this machine has, measured (security item 8: plan limits alone let one user exhaust the
 * host). Read synchronously and cheaply (a few /proc files and one statfs), at every admission, so
 * the check and the row that records the new commitment happen in the same tick: two concurrent
 * creates cannot both pass on the same room.
 *
 * The admission math is in services/admission.ts; this module only reads numbers.
 */
export interface HostMeasure {
  /** MemTotal, MiB. */
  memoryTotalMb: number;
  /** MemAvailable, MiB (informational: admission budgets by limits, not by what is free right now). */
  memoryAvailableMb: number | null;
  /** kernel.pid_max and kernel.threads-max. */
  pidMax: number;
  threadsMax: number;
  /** Threads (kernel scheduling entities) that exist now, sandboxes' included. */
  threadsInUse: number;
  /**
   * The tightest pids cgroup above the engine (a systemd TasksMax, a container's limit): its
   * pids.max and pids.current, or null when no ancestor has a limit.
   */
  pidsCgroup: { max: number; current: number; path: string } | null;
  /** The filesystem that holds the engine's data (volumes, template layers, snapshots), MiB. */
  diskTotalMb: number;
  /** Free for unprivileged users (statfs f_bavail): the console and the database share this disk. */
  diskFreeMb: number;
  /** Which numbers come from test knobs instead of the machine. */
  overridden: string[];
}

export interface MeasureOverrides {
  /** ORKESTR_ENGINE_HOST_MEMORY_MB: pretend MemTotal is this (test knob). */
  memoryMb?: number;
  /** ORKESTR_ENGINE_HOST_DISK_FREE_MB: pretend the data filesystem has this much free (test knob). */
  diskFreeMb?: number;
}

const MiB = 1024 * 1024;

/** MemTotal and MemAvailable of /proc/meminfo, in MiB. */
export function parseMeminfo(text: string): { totalMb: number; availableMb: number | null } {
  const kb = (key: string) => {
    const m = new RegExp(`^${key}:\\s+(\\d+)\\s*kB`, "m").exec(text);
    return m ? Number(m[1]) : null;
  };
  const total = kb("MemTotal");
  if (total === null) throw new Error("/proc/meminfo has no MemTotal");
  const available = kb("MemAvailable");
  return { totalMb: Math.floor(total / 1024), availableMb: available === null ? null : Math.floor(available / 1024) };
}

/** The thread count of /proc/loadavg ("0.12 0.33 0.21 1/118 8107": 118). */
export function parseLoadavgThreads(text: string): number {
  const m = /\s\d+\/(\d+)\s/.exec(text);
  if (!m) throw new Error(`unexpected /proc/loadavg: ${text.trim()}`);
  return Number(m[1]);
}

function readInt(file: string): number | null {
  try {
    const v = fs.readFileSync(file, "utf8").trim();
    return /^\d+$/.test(v) ? Number(v) : null;
  } catch {
    return null;
  }
}

/** The engine's own pids cgroup path (v1 "pids" controller, or the v2 unified path). */
function ownPidsCgroup(): string | null {
  try {
    for (const line of fs.readFileSync("/proc/self/cgroup", "utf8").split("\n")) {
      const [, ctrls, p] = line.split(":");
      if (ctrls === undefined || p === undefined) continue;
      if (ctrls.split(",").includes("pids")) return path.join("/sys/fs/cgroup/pids", p);
      if (ctrls === "" && fs.existsSync("/sys/fs/cgroup/cgroup.controllers")) return path.join("/sys/fs/cgroup", p);
    }
  } catch {
    /* no /proc */
  }
  return null;
}

/** The ancestor (or own) pids cgroup with the least headroom, if any has a limit. */
function tightestPidsCgroup(): HostMeasure["pidsCgroup"] {
  const own = ownPidsCgroup();
  if (!own) return null;
  let best: HostMeasure["pidsCgroup"] = null;
  for (let dir = own; dir.startsWith("/sys/fs/cgroup/") && dir !== "/sys/fs/cgroup/pids"; dir = path.dirname(dir)) {
    const max = readInt(path.join(dir, "pids.max"));
    const current = readInt(path.join(dir, "pids.current"));
    if (max === null || current === null) continue;
    if (!best || max - current < best.max - best.current) best = { max, current, path: dir };
  }
  return best;
}

/** Measures the machine now. Throws only when /proc/meminfo or statfs cannot be read at all. */
export function measureHost(dataRoot: string, overrides: MeasureOverrides = {}): HostMeasure {
  const overridden: string[] = [];
  const mem = parseMeminfo(fs.readFileSync("/proc/meminfo", "utf8"));
  let memoryTotalMb = mem.totalMb;
  if (overrides.memoryMb !== undefined) {
    memoryTotalMb = overrides.memoryMb;
    overridden.push("memory_total_mb");
  }
  let threadsInUse = 0;
  try {
    threadsInUse = parseLoadavgThreads(fs.readFileSync("/proc/loadavg", "utf8"));
  } catch {
    /* unknown: counted as none, the reserve still applies */
  }
  const st = fs.statfsSync(existingAncestor(dataRoot));
  let diskFreeMb = Math.floor((st.bavail * st.bsize) / MiB);
  if (overrides.diskFreeMb !== undefined) {
    diskFreeMb = overrides.diskFreeMb;
    overridden.push("disk_free_mb");
  }
  return {
    memoryTotalMb,
    memoryAvailableMb: overrides.memoryMb !== undefined ? null : mem.availableMb,
    pidMax: readInt("/proc/sys/kernel/pid_max") ?? 32_768,
    threadsMax: readInt("/proc/sys/kernel/threads-max") ?? Number.MAX_SAFE_INTEGER,
    threadsInUse,
    pidsCgroup: tightestPidsCgroup(),
    diskTotalMb: Math.floor((st.blocks * st.bsize) / MiB),
    diskFreeMb,
    overridden,
  };
}

function existingAncestor(p: string): string {
  let dir = path.resolve(p);
  while (!fs.existsSync(dir) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

/** Bytes a file really occupies on disk (a sparse volume image: far less than its length). */
export function allocatedBytes(file: string): number {
  try {
    return fs.statSync(file).blocks * 512;
  } catch {
    return 0;
  }
}
