import type { EngineConfig } from "../config.js";
import { ApiError } from "../errors.js";
import { allocatedBytes, measureHost, type HostMeasure } from "../runtime/capacity.js";
import { BUILD_PIDS_MAX, BUILD_SIZE } from "../runtime/template-build.js";
import type { Db } from "../store/db.js";

/**
 * Admission against the machine's measured capacity (security item 8). A plan's numbers are the
 * hosted service's (payg: 32 GiB of live sandboxes plus 10 paused, 1,024 pids each); one engine on
 * one machine must also never promise more RAM, pids or disk than the machine has, or one user
 * takes the engine and the console down with it. Every admission therefore also checks:
 *
 * - **RAM**: MemTotal minus a reserve for the host, the engine and the console (default
 *   max(1 GiB, 10 %): the engine and Next are a few hundred MiB each, the kernel's own tables and
 *   the page cache the database and builds need grow with the machine). Live **and paused**
 *   sandboxes count at their memory limit: a paused sandbox is frozen, its pages stay in RAM (no
 *   CRIU here). Queued and running template builds count too, as many as run at once (build slots).
 * - **pids**: min(kernel.pid_max, kernel.threads-max) minus what the host uses now (threads outside
 *   sandboxes) and a reserve (default max(2048, 10 %)), and within the tightest pids cgroup above
 *   the engine. Each sandbox reserves its whole pids.max, paused ones included.
 * - **disk**: free space of the engine's data filesystem minus a reserve (default max(2 GiB, 2 %)),
 *   minus what is already promised: each volume's size not yet allocated by its sparse image (it
 *   may fill up to size_gb at any time; a volume being moved also holds its copy), the layer cap
 *   of each queued or running template build, and what each named snapshot being taken will write
 *   (reserved before its copy starts, at the size of the sandbox's /workspace and /tmp then; once
 *   written, its files are in the measured free space like a finished layer's). Workspaces need no
 *   disk: they are tmpfs charged to the sandbox's memory cgroup (host.scratchTmpfs), so the RAM
 *   check covers them.
 *
 * The checks are pure functions of measured numbers (below, unit-tested), fed by HostAdmission.
 * Refusals are `503 fleet_full` with Retry-After: the contract's code for "the provider has no room
 * right now" (the SDK's create() and resume() retry it with a bounded budget), as opposed to the
 * plan's own `429 concurrency_limit` / `403 plan_limit`, which the user's plan decides.
 */

export interface Reserves {
  memoryMb: number;
  pids: number;
  diskMb: number;
}

/** The host's reserves: configured, or derived from the machine (see the module comment for why). */
export function reservesFor(
  m: Pick<HostMeasure, "memoryTotalMb" | "pidMax" | "threadsMax" | "diskTotalMb">,
  configured: Partial<Reserves> = {},
): Reserves {
  return {
    memoryMb: configured.memoryMb ?? Math.max(1024, Math.round(m.memoryTotalMb * 0.1)),
    pids: configured.pids ?? Math.max(2048, Math.round(Math.min(m.pidMax, m.threadsMax) * 0.1)),
    diskMb: configured.diskMb ?? Math.max(2048, Math.round(m.diskTotalMb * 0.02)),
  };
}

/** What the engine has promised, from its own records. */
export interface Commitments {
  /** Memory limits of live and paused sandboxes (MiB). */
  sandboxMemoryMb: number;
  /** The paused part of sandboxMemoryMb. */
  pausedMemoryMb: number;
  /** A queued or running template build's memory limit (MiB; builds run one at a time). */
  buildMemoryMb: number;
  /**
   * Warm-pool members (services/warm-pool.ts), booting or ready: no account's yet, but their
   * processes, memory limit and pids.max are as real as a customer sandbox's.
   */
  pooled: number;
  /** Their memory limits (MiB), part of sandboxMemoryMb. */
  pooledMemoryMb: number;
  /** pids.max of every live, paused and pooled sandbox and of the build. */
  pids: number;
  /** Threads that exist now inside those sandboxes (inside their reservation, so not the host's). */
  sandboxThreadsNow: number;
  /**
   * Disk promised and not yet allocated: volumes up to their size, builds up to the layer cap,
   * snapshots being taken up to their reservation (MiB).
   */
  diskMb: number;
}

/** The clamp as GET /v1/sandboxes/limits shows it (`host_capacity`), all sizes in MiB. */
export interface HostCapacity {
  memory_total_mb: number;
  memory_reserved_mb: number;
  /** memory_total_mb − memory_reserved_mb. */
  memory_for_sandboxes_mb: number;
  /** Live + paused + pooled sandboxes + a queued/running template build. */
  memory_committed_mb: number;
  memory_paused_mb: number;
  /**
   * The warm pool's part of memory_committed_mb, and how many sandboxes it holds. The pool gives
   * way to customers: a create the machine cannot otherwise hold ends pool members first.
   */
  memory_pooled_mb: number;
  pooled_sandboxes: number;
  memory_builds_mb: number;
  /** What one more sandbox may have (never negative). */
  memory_free_mb: number;
  memory_available_now_mb: number | null;
  /** min(pid_max, threads-max), or the tightest pids cgroup's pids.max above the engine. */
  pids_limit: number;
  pids_reserved: number;
  pids_used_by_host: number;
  pids_committed: number;
  pids_free: number;
  disk_total_mb: number;
  disk_free_mb: number;
  disk_reserved_mb: number;
  disk_committed_mb: number;
  /** What one more volume or template may take. */
  disk_available_mb: number;
  /** Numbers that come from test knobs (ORKESTR_ENGINE_HOST_*), not from the machine. */
  test_overrides: string[];
}

/** The clamp, from measured numbers, reserves and commitments. */
export function hostCapacity(m: HostMeasure, r: Reserves, c: Commitments): HostCapacity {
  const memoryFor = Math.max(0, m.memoryTotalMb - r.memoryMb);
  const memoryCommitted = c.sandboxMemoryMb + c.buildMemoryMb;
  // pids: global headroom (threads outside sandboxes are the host's), or a cgroup's if tighter.
  const globalLimit = Math.min(m.pidMax, m.threadsMax);
  const hostThreads = Math.max(0, m.threadsInUse - c.sandboxThreadsNow);
  let pidsLimit = globalLimit;
  let pidsHost = hostThreads;
  if (m.pidsCgroup) {
    const cgHost = Math.max(0, m.pidsCgroup.current - c.sandboxThreadsNow);
    if (m.pidsCgroup.max - cgHost < globalLimit - hostThreads) {
      pidsLimit = m.pidsCgroup.max;
      pidsHost = cgHost;
    }
  }
  const diskAvailable = m.diskFreeMb - r.diskMb - c.diskMb;
  return {
    memory_total_mb: m.memoryTotalMb,
    memory_reserved_mb: r.memoryMb,
    memory_for_sandboxes_mb: memoryFor,
    memory_committed_mb: memoryCommitted,
    memory_paused_mb: c.pausedMemoryMb,
    memory_pooled_mb: c.pooledMemoryMb,
    pooled_sandboxes: c.pooled,
    memory_builds_mb: c.buildMemoryMb,
    memory_free_mb: Math.max(0, memoryFor - memoryCommitted),
    memory_available_now_mb: m.memoryAvailableMb,
    pids_limit: pidsLimit,
    pids_reserved: r.pids,
    pids_used_by_host: pidsHost,
    pids_committed: c.pids,
    pids_free: Math.max(0, pidsLimit - r.pids - pidsHost - c.pids),
    disk_total_mb: m.diskTotalMb,
    disk_free_mb: m.diskFreeMb,
    disk_reserved_mb: r.diskMb,
    disk_committed_mb: c.diskMb,
    disk_available_mb: Math.max(0, diskAvailable),
    test_overrides: m.overridden,
  };
}

/** A refusal: which resource, what was asked, what is left, and the words for the user. */
export interface Refusal {
  resource: "memory" | "pids" | "disk";
  needed: number;
  available: number;
  detail: string;
}

const NOT_PLAN = "This is the machine's capacity, not your plan's limit";

/** "2.0 GiB" / "512 MiB". */
export function formatMb(mb: number): string {
  return mb >= 1024 ? `${(mb / 1024).toFixed(1)} GiB` : `${Math.round(mb)} MiB`;
}

/**
 * One more sandbox (memoryMb, pidsMax). `counted`: it is already among the commitments (a paused
 * sandbox resuming), so it needs no new room, only a machine that is not over-committed (capacity
 * can shrink: a memory balloon, a lowered pid_max).
 */
export function checkSandbox(
  cap: HostCapacity,
  need: { memoryMb: number; pidsMax: number; counted?: boolean; what?: string },
): Refusal | null {
  const what = need.what ?? "this sandbox";
  const memNeeded = need.counted ? 0 : need.memoryMb;
  const memLeft = cap.memory_for_sandboxes_mb - cap.memory_committed_mb;
  if (memNeeded > memLeft || memLeft < 0) {
    const held = `${formatMb(cap.memory_committed_mb)} is held by running and paused sandboxes${cap.memory_builds_mb ? " and template builds" : ""}`;
    const total = `${formatMb(cap.memory_total_mb)} in all, ${formatMb(cap.memory_reserved_mb)} kept for the host, the engine and the console`;
    return {
      resource: "memory",
      needed: memNeeded,
      available: Math.max(0, memLeft),
      detail: need.counted
        ? `This machine's sandboxes already hold more RAM than it has for them (${total}; ${held}), so this sandbox cannot resume and grow. ${NOT_PLAN}: terminate a sandbox first, or retry later.`
        : `This machine has ${formatMb(Math.max(0, memLeft))} of RAM left for sandboxes (${total}; ${held}, paused ones included since they stay in memory) and ${what} needs ${formatMb(need.memoryMb)}. ${NOT_PLAN}: terminate a sandbox (paused ones too) or retry later.`,
    };
  }
  const pidsNeeded = need.counted ? 0 : need.pidsMax;
  const pidsLeft = cap.pids_limit - cap.pids_reserved - cap.pids_used_by_host - cap.pids_committed;
  if (pidsNeeded > pidsLeft || pidsLeft < 0) {
    return {
      resource: "pids",
      needed: pidsNeeded,
      available: Math.max(0, pidsLeft),
      detail:
        `This machine has room for ${Math.max(0, pidsLeft)} more processes in sandboxes (limit ${cap.pids_limit}, ${cap.pids_reserved} kept for the host, ` +
        `${cap.pids_used_by_host} in use outside sandboxes, ${cap.pids_committed} reserved by running and paused sandboxes) and ${what} ${need.counted ? "holds" : "reserves"} ${need.pidsMax}. ${NOT_PLAN}: terminate a sandbox or retry later.`,
    };
  }
  return null;
}

/** `mb` more of the data disk (a volume, a volume's growth, a template layer, a snapshot). */
export function checkDisk(cap: HostCapacity, mb: number, what: string): Refusal | null {
  const left = cap.disk_free_mb - cap.disk_reserved_mb - cap.disk_committed_mb;
  if (mb <= left) return null;
  return {
    resource: "disk",
    needed: mb,
    available: Math.max(0, left),
    detail:
      `This machine's data disk has ${formatMb(Math.max(0, left))} left for volumes, templates and snapshots (${formatMb(cap.disk_free_mb)} free, ${formatMb(cap.disk_reserved_mb)} kept free for the host, ` +
      `${formatMb(cap.disk_committed_mb)} promised to existing volumes, template builds and snapshots being taken) and ${what} needs ${formatMb(mb)}. ${NOT_PLAN}: delete a volume, template or snapshot, or retry later.`,
  };
}

/**
 * An account's RAM budget for live sandboxes, clamped by the machine: the plan's, or less when the
 * machine (every account's live and paused sandboxes and the builds) has less left. A create of
 * X MiB passes both checks iff accountUsedMb + X ≤ this.
 */
export function effectiveRamBudgetMb(planBudgetMb: number, accountUsedMb: number, cap: HostCapacity): number {
  // Pooled memory counts as free here: a create the machine is short for ends pool members first.
  return Math.max(0, Math.min(planBudgetMb, accountUsedMb + cap.memory_free_mb + cap.memory_pooled_mb));
}

/** How many 1 GiB sandboxes could ever run at once, plan and machine (RAM and pids) together. */
export function maxConcurrent(planBudgetMb: number, cap: HostCapacity, pidsPerSandbox: number): number {
  const byRam = Math.floor(Math.min(planBudgetMb, cap.memory_for_sandboxes_mb) / 1024);
  const byPids = Math.floor(Math.max(0, cap.pids_limit - cap.pids_reserved - cap.pids_used_by_host) / pidsPerSandbox);
  return Math.min(byRam, byPids);
}

/** One line for the engine's start log: what the clamp leaves for sandboxes. */
export function describeCapacity(c: HostCapacity): string {
  const knobs = c.test_overrides.length ? ` [test overrides: ${c.test_overrides.join(", ")}]` : "";
  return (
    `${formatMb(c.memory_for_sandboxes_mb)} RAM for sandboxes (${formatMb(c.memory_reserved_mb)} of ${formatMb(c.memory_total_mb)} kept for the host), ` +
    `${c.pids_limit - c.pids_reserved - c.pids_used_by_host} pids (${c.pids_reserved} kept), ` +
    `${formatMb(Math.max(0, c.disk_free_mb - c.disk_reserved_mb))} of disk for volumes, templates and snapshots (${formatMb(c.disk_reserved_mb)} kept free)${knobs}`
  );
}

function refuse(r: Refusal): ApiError {
  const unit = r.resource === "pids" ? "pids" : "mb";
  return new ApiError(
    "fleet_full",
    r.detail,
    { resource: r.resource, [`needed_${unit}`]: r.needed, [`available_${unit}`]: r.available, retry_after_seconds: 30 },
    { "Retry-After": "30" },
  );
}

// ------------------------------------------------------------------------------------------------
// The engine's side: measure, add up the records, check.

const LIVE_OR_PAUSED = "('creating','running','resuming','pausing','paused')";

/** What admission needs from the sandbox and volume services (narrow, so it survives their refactors). */
export interface AdmissionSources {
  /** Threads now in a sandbox's pids cgroup, or undefined when it has no process tree here. */
  sandboxThreads(id: string): number | undefined;
  /** The host path of a volume's image (or directory), and whether size_gb is a real image. */
  volumeData(region: string, id: string): { path: string; image: boolean };
  /** The warm pool's members (booting or ready): how many, their memory limits, their threads now. */
  pooled?(): { count: number; memoryMb: number; threads: number };
}

/**
 * How long one measurement of the machine serves. The figures it reads (RAM, pid limits, threads in
 * use, free disk) move slowly, while what admission adds up from the database (running and paused
 * sandboxes, builds, volumes) is read afresh every time: two creates in one second still see each other.
 */
const MEASURE_TTL_MS = 1000;

function cachedFor<T>(ms: number, read: () => T): { (): T; forget(): void } {
  let value: T | undefined;
  let at = -Infinity;
  const get = () => {
    const now = performance.now();
    if (value === undefined || now - at > ms) {
      value = read();
      at = now;
    }
    return value;
  };
  return Object.assign(get, { forget: () => void (value = undefined) });
}

/** Disk held for work under way (a snapshot being copied), given back once, when it settles. */
export interface DiskReservation {
  readonly mb: number;
  release(): void;
}

/** Checks every create, resume, volume size and template against the machine; wired in app.ts. */
export class HostAdmission {
  private readonly bytesPerGb: number;

  constructor(
    private readonly config: EngineConfig,
    private readonly db: Db,
    private readonly sources: AdmissionSources,
    /** Sandboxes' pids.max (SandboxService's); every sandbox has the same. */
    private readonly sandboxPidsMax: number,
    measure: () => HostMeasure = () =>
      measureHost(config.root, { memoryMb: config.hostCapacity.memoryMb, diskFreeMb: config.hostCapacity.diskFreeMb }),
  ) {
    this.bytesPerGb = config.volumeUnitMb * 1024 * 1024;
    this.measure = cachedFor(MEASURE_TTL_MS, measure);
    this.liveOrPaused = db.prepare(`SELECT id, status, memory_mb FROM sandboxes WHERE status IN ${LIVE_OR_PAUSED}`);
    this.buildsPending = db
      .prepare("SELECT COUNT(*) AS n FROM templates WHERE deleted_at IS NULL AND status IN ('queued','building')")
      .pluck();
    this.allVolumes = db.prepare("SELECT id, region, size_gb, used_bytes, status FROM volumes");
  }

  /** The machine's figures, read at most once per MEASURE_TTL_MS (every admission asks; commitments are always fresh). */
  private readonly measure: { (): HostMeasure; forget(): void };
  /** Disk reserved for snapshots being taken (MiB): in memory, as a capture never outlives the engine. */
  private reservedDiskMb = 0;
  private readonly liveOrPaused;
  private readonly buildsPending;
  private readonly allVolumes;

  private commitments(): Commitments {
    const s = this.liveOrPaused.all() as { id: string; status: string; memory_mb: number }[];
    const builds = this.buildsPending.get() as number;
    let threads = 0;
    for (const row of s) threads += this.sources.sandboxThreads(row.id) ?? 0;
    const volumes = this.allVolumes.all() as {
      id: string;
      region: string;
      size_gb: number;
      used_bytes: number;
      status: string;
    }[];
    let diskBytes = builds * this.config.templateMaxMb * 1024 * 1024;
    for (const v of volumes) {
      const data = this.sources.volumeData(v.region, v.id);
      const onDisk = data.image ? allocatedBytes(data.path) : v.used_bytes;
      diskBytes += Math.max(0, v.size_gb * this.bytesPerGb - onDisk);
      // A move copies the image to the other region before the original goes.
      if (v.status === "moving") diskBytes += onDisk;
    }
    diskBytes += this.reservedDiskMb * 1024 * 1024;
    const pool = this.sources.pooled?.() ?? { count: 0, memoryMb: 0, threads: 0 };
    return {
      sandboxMemoryMb: s.reduce((a, r) => a + r.memory_mb, 0) + pool.memoryMb,
      pausedMemoryMb: s.filter((r) => r.status === "paused").reduce((a, r) => a + r.memory_mb, 0),
      pooled: pool.count,
      pooledMemoryMb: pool.memoryMb,
      buildMemoryMb: this.buildsAtOnce(builds) * BUILD_SIZE.memory_mb,
      pids: (s.length + pool.count) * this.sandboxPidsMax + this.buildsAtOnce(builds) * BUILD_PIDS_MAX,
      sandboxThreadsNow: threads + pool.threads,
      diskMb: Math.ceil(diskBytes / (1024 * 1024)),
    };
  }

  /** The clamp as of now. */
  capacity(): HostCapacity {
    const m = this.measure();
    const h = this.config.hostCapacity;
    return hostCapacity(
      m,
      reservesFor(m, { memoryMb: h.memoryReserveMb, pids: h.pidsReserve, diskMb: h.diskReserveMb }),
      this.commitments(),
    );
  }

  /** A new sandbox (create): 503 fleet_full unless the machine has its memory and pids. */
  admitSandbox(memoryMb: number): void {
    const r = checkSandbox(this.capacity(), { memoryMb, pidsMax: this.sandboxPidsMax });
    if (r) throw refuse(r);
  }

  /** A paused sandbox resuming: already counted, refused only when the machine is over-committed. */
  admitResume(memoryMb: number): void {
    const r = checkSandbox(this.capacity(), { memoryMb, pidsMax: this.sandboxPidsMax, counted: true });
    if (r) throw refuse(r);
  }

  /** `gb` more volume size (a new volume, or a volume's growth). */
  admitVolumeGb(gb: number, what = "this volume"): void {
    if (gb <= 0) return;
    const r = checkDisk(this.capacity(), Math.ceil((gb * this.bytesPerGb) / (1024 * 1024)), what);
    if (r) throw refuse(r);
  }

  /**
   * `mb` of the data disk for work about to write it (a snapshot's copy): 503 fleet_full unless it
   * fits, else held in the commitments until released. The check and the hold happen together, so
   * two snapshots started at once cannot both take the last room.
   */
  reserveDisk(mb: number, what: string): DiskReservation {
    const need = Math.max(0, Math.ceil(mb));
    const r = checkDisk(this.capacity(), need, what);
    if (r) throw refuse(r);
    this.reservedDiskMb += need;
    let held = true;
    return {
      mb: need,
      release: () => {
        if (!held) return;
        held = false;
        this.reservedDiskMb -= need;
        // What was written is on the disk now (or gone again): the next admission measures afresh.
        this.measure.forget();
      },
    };
  }

  /** Files of the engine's came or went (a snapshot deleted): the next admission measures the disk afresh. */
  diskChanged(): void {
    this.measure.forget();
  }

  /** How many of `pending` queued or running builds run at once (each slot holds a build sandbox's RAM and pids). */
  private buildsAtOnce(pending: number): number {
    return Math.min(pending, this.config.templateBuilds);
  }

  /** A new template: its layer may grow to the cap, and its build needs a build sandbox's RAM and pids. */
  admitTemplate(): void {
    const cap = this.capacity();
    const disk = checkDisk(
      cap,
      this.config.templateMaxMb,
      "a template build (its layer may grow to ORKESTR_ENGINE_TEMPLATE_MAX_MB)",
    );
    if (disk) throw refuse(disk);
    // While a slot is free, a new build will take one: its share must fit. Once every slot is
    // held, it waits for one, and what it will use is held already.
    if (cap.memory_builds_mb < this.config.templateBuilds * BUILD_SIZE.memory_mb) {
      const build = checkSandbox(cap, {
        memoryMb: BUILD_SIZE.memory_mb,
        pidsMax: BUILD_PIDS_MAX,
        what: "a template build",
      });
      if (build) throw refuse(build);
    }
  }
}
