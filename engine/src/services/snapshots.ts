import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import type { EngineConfig } from "../config.js";
import { ApiError } from "../errors.js";
import { newId } from "../lib/ids.js";
import { iso } from "../lib/time.js";
import { sandboxDirs, type SandboxDirs } from "../runtime/sandbox-proc.js";
import { chownTree, copyTree, diskUsageBytes, mountTmpfs, unmount, usageBytesAs } from "../runtime/tree-copy.js";
import type { Db } from "../store/db.js";
import { pageNewestFirst, type Condition } from "../store/paging.js";
import { formatMb, type HostAdmission } from "./admission.js";
import type { EventLog } from "./events.js";
import type { SandboxService } from "./sandboxes.js";

/** What taking a snapshot needs of the sandbox service (narrow: SandboxService builds this service). */
export type SnapshotSandboxes = Pick<
  SandboxService,
  "plan" | "getRow" | "rowUnscoped" | "runningRow" | "exclusive" | "sandboxDir"
>;

export interface SnapshotRow {
  id: string;
  account_id: string;
  name: string;
  sandbox_id: string;
  template: string;
  /** The source sandbox's size: children boot with it unless they ask for another. */
  size: string;
  region: string;
  status: "creating" | "ready";
  size_bytes: number;
  capture_ms: number | null;
  created_at: number;
}

/** What a snapshot holds. Locally there is no CRIU (engine-notes §7): files only, never memory. */
const CAPTURED_PATHS = ["/workspace", "/tmp"] as const;

export interface SnapshotView {
  id: string;
  name: string;
  sandbox_id: string;
  template: string;
  region: string;
  size_mb: number;
  status: string;
  created_at: string;
  /** Extras to the contract, so a client is never misled about what a fork inherits. */
  sandbox_size: string;
  memory_captured: false;
  captured_paths: readonly string[];
  /** How long the source was frozen while its files were copied. */
  frozen_ms: number | null;
}

/**
 * Named snapshots (POST /v1/sandboxes/:id/snapshots, /v1/snapshots): a copy of a running sandbox's /workspace and /tmp, taken while
 * its processes are frozen for a moment, that any number of new sandboxes boot from. Stored under
 * `<root>/snapshots/<id>` (owner-only), so they outlive engine restarts until deleted.
 */
export class SnapshotService {
  private readonly dir: string;
  /** Forks copying out of a snapshot right now: a delete waits for them. */
  private readers = new Map<string, Set<Promise<unknown>>>();
  /** Captures in progress: a delete of one waits for it to settle. */
  private capturing = new Map<string, Promise<unknown>>();

  constructor(
    config: EngineConfig,
    private readonly db: Db,
    private readonly events: EventLog,
    private readonly sandboxes: SnapshotSandboxes,
    /** Whether the engine may mount (root in its private mount namespace): then captures stage in RAM. */
    private readonly canMount: boolean,
    /** The machine's data disk (services/admission.ts): a capture reserves what it will write there. */
    private readonly admission: Pick<HostAdmission, "reserveDisk" | "diskChanged">,
  ) {
    this.dir = path.join(config.root, "snapshots");
    // Searchable, not listable: a capture's copy runs as the source's uid into its own staging dir.
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o711 });
    fs.chmodSync(this.dir, 0o711);
  }

  /** Captures an earlier run left half-done are dropped (their copy may be incomplete), with any stray files. */
  recover(): number {
    const stale = this.db.prepare("SELECT id FROM snapshots WHERE status != 'ready'").all() as { id: string }[];
    for (const s of stale) this.db.prepare("DELETE FROM snapshots WHERE id = ?").run(s.id);
    const known = this.db.prepare("SELECT 1 FROM snapshots WHERE id = ?").pluck();
    for (const name of fs.readdirSync(this.dir)) {
      if (!known.get(name)) fs.rmSync(path.join(this.dir, name), { recursive: true, force: true });
    }
    return stale.length;
  }

  dataDir(id: string): string {
    return path.join(this.dir, id);
  }

  view(row: SnapshotRow): SnapshotView {
    return {
      id: row.id,
      name: row.name,
      sandbox_id: row.sandbox_id,
      template: row.template,
      region: row.region,
      size_mb: Math.ceil(row.size_bytes / (1024 * 1024)),
      status: row.status,
      created_at: iso(row.created_at),
      sandbox_size: row.size,
      memory_captured: false,
      captured_paths: CAPTURED_PATHS,
      frozen_ms: row.capture_ms,
    };
  }

  /** One of the account's snapshots, by id (any case) or by name. */
  find(account: string, ref: string): SnapshotRow | undefined {
    return this.db
      .prepare("SELECT * FROM snapshots WHERE account_id = ? AND (id = ? COLLATE NOCASE OR name = ?)")
      .get(account, ref, ref) as SnapshotRow | undefined;
  }

  get(account: string, ref: string): SnapshotRow {
    const row = this.find(account, ref);
    if (!row) throw new ApiError("snapshot_not_found", `Snapshot ${ref} not found`);
    return row;
  }

  private byId(id: string): SnapshotRow {
    return this.db.prepare("SELECT * FROM snapshots WHERE id = ?").get(id) as SnapshotRow;
  }

  /** How many named snapshots an account holds (the plan's cap counts per account). */
  count(account: string): number {
    return (this.db.prepare("SELECT COUNT(*) AS n FROM snapshots WHERE account_id = ?").get(account) as { n: number })
      .n;
  }

  list(
    account: string,
    filter: { sandboxId?: string; limit: number; cursor?: string },
  ): { items: SnapshotView[]; next: string | null } {
    const where: Condition[] = [["account_id = ?", account]];
    if (filter.sandboxId) where.push(["sandbox_id = ? COLLATE NOCASE", filter.sandboxId]);
    const { items, next } = pageNewestFirst<SnapshotRow>(this.db, "snapshots", where, filter);
    return { items: items.map((r) => this.view(r)), next };
  }

  async create(account: string, sandboxRef: string, name: string): Promise<SnapshotView> {
    const notRunning = (row: { id: string; status: string }) =>
      new ApiError(
        "sandbox_not_running",
        `Sandbox ${row.id} is ${row.status}; only a running sandbox can be snapshotted`,
      );
    const before = this.sandboxes.getRow(account, sandboxRef);
    if (before.status !== "running") throw notRunning(before);
    // What the copy will write to the data disk: the sandbox's /workspace and /tmp as they are now
    // (read before the checks below, which then run in one tick with the reservation and the insert).
    const estimate = await this.scratchBytes(before);
    const sbx = this.sandboxes.getRow(account, sandboxRef);
    if (sbx.status !== "running") throw notRunning(sbx);
    if (this.find(account, name))
      throw new ApiError("snapshot_name_taken", `A snapshot named "${name}" already exists`, { name });
    const max = this.sandboxes.plan.maxNamedSnapshots;
    const held = this.count(account);
    if (held >= max) {
      throw new ApiError(
        "snapshot_cap_reached",
        `The ${this.sandboxes.plan.name} plan keeps at most ${max} named snapshot(s); delete one first`,
        { max_named_snapshots: max },
      );
    }
    // After the plan's cap: the machine's disk (503 fleet_full), held until the copy settles.
    const reservation = this.admission.reserveDisk(
      estimate / (1024 * 1024),
      `a snapshot of ${sbx.id} (its /workspace and /tmp hold ${formatMb(estimate / (1024 * 1024))})`,
    );
    // Checks and this insert run in one tick, so two concurrent requests cannot both take the last slot or the name.
    const id = newId("snap");
    this.db
      .prepare(
        "INSERT INTO snapshots(id, account_id, name, sandbox_id, template, size, region, status, created_at) VALUES (?,?,?,?,?,?,?,'creating',?)",
      )
      .run(id, account, name, sbx.id, sbx.template, sbx.size, sbx.region, Date.now());
    const partial = path.join(this.dir, `${id}.partial`);
    const captured = (async () => {
      const captureMs = await this.capture(sbx.id, partial);
      await fsp.rename(partial, this.dataDir(id));
      const bytes = await diskUsageBytes(this.dataDir(id));
      this.db
        .prepare("UPDATE snapshots SET status='ready', size_bytes=?, capture_ms=? WHERE id=?")
        .run(bytes, captureMs, id);
    })();
    this.capturing.set(id, captured);
    try {
      await captured;
    } catch (e) {
      await fsp.rm(partial, { recursive: true, force: true });
      await fsp.rm(this.dataDir(id), { recursive: true, force: true });
      this.db.prepare("DELETE FROM snapshots WHERE id = ?").run(id);
      if (e instanceof ApiError) throw e;
      throw ApiError.internal(`Snapshotting ${sbx.id} failed`, e);
    } finally {
      this.capturing.delete(id);
      reservation.release();
    }
    const view = this.view(this.byId(id));
    this.events.record(sbx.id, "snapshot.created", { snapshot: view });
    return view;
  }

  /**
   * Copies the sandbox's scratch while every process in it is frozen (a counted freeze hold, so a
   * pause arriving meanwhile is kept). Runs as one lifecycle step of the sandbox: a terminate waits.
   * Where the engine may mount, the frozen copy goes to a tmpfs as large as the sandbox's own
   * scratch and only then, thawed, to disk: the freeze lasts a RAM-to-RAM copy however busy the disk.
   * Returns how long the sandbox was frozen.
   */
  private capture(sandboxId: string, into: string): Promise<number> {
    return this.sandboxes.exclusive(sandboxId, async () => {
      const row = this.sandboxes.rowUnscoped(sandboxId);
      if (row?.status !== "running")
        throw new ApiError(
          "sandbox_not_running",
          `Sandbox ${sandboxId} is ${row?.status ?? "gone"}; only a running sandbox can be snapshotted`,
        );
      const { live } = await this.sandboxes.runningRow(row);
      const from = sandboxDirs(this.sandboxes.sandboxDir(row.id));
      const staging = this.canMount ? `${into}.staging` : into;
      await fsp.mkdir(staging, { mode: 0o700 });
      if (this.canMount) await mountTmpfs(staging, Math.max(256, row.memory_mb) * 1024 * 1024);
      try {
        const to = sandboxDirs(staging);
        for (const d of [staging, to.workspace, to.tmp]) {
          if (d !== staging) await fsp.mkdir(d, { mode: 0o700 });
          await fsp.chown(d, row.uid, row.uid);
        }
        const started = performance.now();
        const frozen = await live.proc.cgroup.freeze();
        try {
          await copyTree(from.workspace, to.workspace, row.uid);
          await copyTree(from.tmp, to.tmp, row.uid);
        } finally {
          if (frozen) await live.proc.cgroup.thaw();
        }
        const frozenMs = Math.round(performance.now() - started);
        if (staging !== into) {
          await fsp.mkdir(into, { mode: 0o700 });
          await copyTree(staging, into);
        }
        // Closed again: only the engine reaches a snapshot's files.
        await fsp.chown(into, 0, 0);
        await fsp.chmod(into, 0o700);
        return frozenMs;
      } finally {
        if (staging !== into) {
          await unmount(staging);
          await fsp.rmdir(staging).catch(() => undefined);
        }
      }
    });
  }

  /** Fills a new sandbox's (still empty) scratch from a snapshot, owned by the new sandbox's uid. */
  async seed(snapshotId: string, dirs: SandboxDirs, uid: number): Promise<void> {
    const src = sandboxDirs(this.dataDir(snapshotId));
    const work = (async () => {
      for (const [from, to] of [
        [src.workspace, dirs.workspace],
        [src.tmp, dirs.tmp],
      ] as const) {
        await copyTree(from, to);
        await chownTree(to, uid);
        // cp -a carried the source root's mode over; scratch roots stay owner-only.
        await fsp.chmod(to, 0o700);
      }
    })();
    const set = this.readers.get(snapshotId) ?? new Set();
    this.readers.set(snapshotId, set.add(work));
    try {
      await work;
    } finally {
      set.delete(work);
      if (!set.size) this.readers.delete(snapshotId);
    }
  }

  async remove(account: string, ref: string): Promise<void> {
    let row = this.get(account, ref);
    const capture = this.capturing.get(row.id);
    if (capture) {
      await capture.catch(() => undefined);
      row = this.get(account, row.id);
    }
    this.db.prepare("DELETE FROM snapshots WHERE id = ?").run(row.id);
    // Children already booted hold their own copies; forks copying right now finish first.
    await Promise.allSettled([...(this.readers.get(row.id) ?? [])]);
    await fsp.rm(this.dataDir(row.id), { recursive: true, force: true });
    this.admission.diskChanged();
  }

  /**
   * Bytes in a running sandbox's /workspace and /tmp now, read with the sandbox's own rights (as the
   * copy will be); when they cannot be read, the most its scratch can hold (its memory size: the
   * scratch tmpfs is that large), so an unreadable tree is never admitted as empty.
   */
  private async scratchBytes(row: { id: string; uid: number; memory_mb: number }): Promise<number> {
    const dirs = sandboxDirs(this.sandboxes.sandboxDir(row.id));
    const used = await usageBytesAs([dirs.workspace, dirs.tmp], row.uid);
    return used ?? row.memory_mb * 1024 * 1024;
  }
}
