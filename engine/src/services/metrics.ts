import type { SandboxCgroup } from "../runtime/cgroups.js";

export interface Sample {
  t: number;
  cpu_percent: number;
  mem_bytes: number;
}

export interface LiveReading {
  usage_cores: number;
  usage_percent: number;
  mem_bytes: number;
}

const GIB = 1024 ** 3;

/**
 * One sandbox's meter: a fixed ring of samples (default 1 s apart, 1 h kept) read from its
 * cgroup, plus the lifetime totals billing uses (on-CPU seconds, working-set GiB-seconds).
 */
export class SandboxMeter {
  private ring: Sample[] = [];
  private head = 0;
  private lastCpuNs: number | null = null;
  private lastAt = 0;
  last: LiveReading = { usage_cores: 0, usage_percent: 0, mem_bytes: 0 };
  /** Lifetime totals, including what earlier engine runs persisted. */
  cpuSeconds: number;
  gbSeconds: number;
  private cpuBaseNs = 0;

  constructor(
    private readonly cores: number,
    private readonly capacity: number,
    persisted: { cpu_seconds: number; gb_seconds: number },
  ) {
    this.cpuSeconds = persisted.cpu_seconds;
    this.gbSeconds = persisted.gb_seconds;
    this.cpuBaseNs = persisted.cpu_seconds * 1e9;
  }

  /** Takes one reading; `now` in ms. Paused sandboxes are not sampled: the meter stops. */
  sample(cgroup: SandboxCgroup, now: number): Sample {
    const r = cgroup.read();
    let cores = 0;
    if (this.lastCpuNs !== null && now > this.lastAt) {
      cores = Math.max(0, (r.cpuNs - this.lastCpuNs) / ((now - this.lastAt) * 1e6));
      this.gbSeconds += (r.workingSetBytes / GIB) * ((now - this.lastAt) / 1000);
    }
    this.lastCpuNs = r.cpuNs;
    this.lastAt = now;
    this.cpuSeconds = (this.cpuBaseNs + r.cpuNs) / 1e9;
    const percent = Math.min(100, (cores / this.cores) * 100);
    this.last = { usage_cores: round(cores, 4), usage_percent: round(percent, 2), mem_bytes: r.workingSetBytes };
    const s: Sample = { t: now, cpu_percent: this.last.usage_percent, mem_bytes: r.workingSetBytes };
    if (this.ring.length < this.capacity) this.ring.push(s);
    else {
      this.ring[this.head] = s;
      this.head = (this.head + 1) % this.capacity;
    }
    return s;
  }

  /**
   * A warm-pool sandbox's cgroup already counted the CPU of its boot when it is claimed: the
   * claimer pays from this reading on, never for what the pool spent before.
   */
  startFrom(cgroup: SandboxCgroup): void {
    this.cpuBaseNs -= cgroup.read().cpuNs;
  }

  /** After a pause the next delta must not span the frozen time. */
  resetBaseline(): void {
    this.lastCpuNs = null;
  }

  samples(sinceMs: number): Sample[] {
    const ordered =
      this.ring.length < this.capacity ? this.ring : [...this.ring.slice(this.head), ...this.ring.slice(0, this.head)];
    return ordered.filter((s) => s.t > sinceMs);
  }
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
