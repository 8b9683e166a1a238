import type { EngineConfig } from "../config.js";
import { ApiError } from "../errors.js";
import { newId } from "../lib/ids.js";
import { iso, isoOrNull } from "../lib/time.js";
import { REGIONS, type Plan } from "../plans.js";
import type { Host } from "../runtime/host.js";
import { detectVolumeBackend, VolumeStore } from "../runtime/volume-fs.js";
import type { Db } from "../store/db.js";
import { pageNewestFirst, type Condition } from "../store/paging.js";
import type { HostAdmission } from "./admission.js";
import type { EventLog } from "./events.js";

/** Where a volume appears in a sandbox (seed 003 / the contract's corrections: not /data). */
export const VOLUME_MOUNT_PATH = "/persist";
/** Size of a volume created on first reference at sandbox create (seed 003). */
export const DEFAULT_VOLUME_GB = 10;
/** Largest volume the contract allows on any plan. */
export const MAX_VOLUME_GB = 100;

export type VolumeStatus = "creating" | "available" | "attached" | "moving" | "deleting" | "error";

export interface VolumeRow {
  id: string;
  account_id: string;
  name: string;
  size_gb: number;
  region: string;
  status: VolumeStatus;
  attached_sandbox_id: string | null;
  /** Space used when last measured (on detach); live from statfs while mounted. */
  used_bytes: number;
  /** Host uid that owns the files on the volume (the last holder's). */
  owner_uid: number | null;
  lifetime_hours: number | null;
  move_to: string | null;
  created_at: number;
  updated_at: number;
}

export interface VolumeView {
  id: string;
  name: string;
  size_gb: number;
  size_mb: number;
  status: VolumeStatus;
  region: string;
  attached_sandbox_id: string | null;
  mount_path: string;
  max_lifetime_hours: number | null;
  max_lifetime_days: number | null;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
  /** Extra: whether size_gb is a hard cap here (a loop-mounted ext4 image) or only recorded. */
  size_enforced: boolean;
}

/** What a sandbox view shows under `volume`. */
export interface VolumeRef {
  id: string;
  name: string | null;
  mount_path: string;
}

export interface CreateVolumeInput {
  name: string;
  size_gb: number;
  region?: string | null;
  lifetimeHours: number | null;
}

export interface UpdateVolumeInput {
  name?: string;
  size_gb?: number;
  /** undefined: unchanged; null: cleared; a number: the new lifetime. */
  lifetimeHours?: number | null;
}

/** A sandbox create's volume, resolved before anything is changed. */
export interface VolumePlan {
  /** The account the creating sandbox (and so the volume) belongs to. */
  account: string;
  existing: VolumeRow | null;
  /** Name of the volume to create on first reference. */
  name: string;
  region: string | null;
}

export interface OpenedVolumeStore {
  store: VolumeStore;
  /** Why volume sizes are not enforced here (plain directories), or null when they are. */
  backendNote: string | null;
}

/** The volume store for this machine: loop-mounted ext4 images where the engine may mount, else directories. */
export function openVolumeStore(config: EngineConfig, host: Host): OpenedVolumeStore {
  const { backend, reason } = detectVolumeBackend(host);
  return {
    store: new VolumeStore(config.root, backend, VolumeStore.bytesPerGb(config.volumeUnitMb)),
    backendNote: reason,
  };
}

/**
 * Persistent volumes (/v1/volumes, with the seed's corrections): named disks mounted at /persist,
 * held by one sandbox at a time (running or paused), pinned to a region, movable while detached,
 * optionally deleted by the engine once their max lifetime has passed.
 *
 * Expiry and holders: a volume past its deadline is deleted by the sweep only once detached; while
 * a sandbox holds it, it stays (its status reads "attached", expires_at in the past), so running
 * work never loses its disk mid-flight. It is deleted at the first sweep after the holder ends.
 */
export class VolumeService {
  readonly store: VolumeStore;
  readonly backendNote: string | null;
  /** Volumes being resized, deleted or created by a request right now. */
  private busy = new Set<string>();
  /** Sandboxes of the previous run adopted after a restart, with their volume still attached (adoptAttachment). */
  private adoptedHolders = new Set<string>();
  private moves = new Set<Promise<void>>();
  private sweeper: NodeJS.Timeout | null = null;
  constructor(
    private readonly config: EngineConfig,
    private readonly db: Db,
    private readonly events: EventLog,
    private readonly plan: Plan,
    /** Where volume data lives (openVolumeStore): host admission reads it too, so it is built first. */
    disk: OpenedVolumeStore,
    /** The machine's disk (services/admission.ts), checked after the plan's caps. */
    private readonly admission: HostAdmission,
  ) {
    this.store = disk.store;
    this.backendNote = disk.backendNote;
  }

  // ------------------------------------------------------------------------------------------
  // Restart, expiry sweep, shutdown

  /**
   * After a restart, before recover(): the sandbox holding `volumeId` was adopted (it kept running,
   * services/sandboxes.ts), so its volume stays attached and mounted where its holder's mount
   * namespace kept it. Returns the mount point to keep, or throws why the volume cannot be kept.
   */
  adoptAttachment(volumeId: string, sandboxId: string): string {
    const row = this.byIdOrNone(volumeId);
    if (!row || row.status !== "attached" || row.attached_sandbox_id !== sandboxId)
      throw new Error(`its volume ${volumeId} is no longer recorded as attached to it`);
    if (!this.store.adoptMount(row.region, row.id)) throw new Error(`its volume ${row.name} is no longer mounted`);
    this.adoptedHolders.add(sandboxId);
    return this.store.mountPath(row.region, row.id);
  }

  /**
   * After a restart: the sandboxes of the previous run that were not adopted are gone (marked
   * failed), and the volumes they held are released, their use measured; an adopted sandbox's
   * volume stays attached (adoptAttachment). Half-done work is settled.
   */
  async recover(): Promise<void> {
    const now = Date.now();
    // Held when the last run died: their use was never measured at a detach, so measure it now.
    const held = (this.db.prepare("SELECT * FROM volumes WHERE status = 'attached'").all() as VolumeRow[]).filter(
      (v) => !v.attached_sandbox_id || !this.adoptedHolders.has(v.attached_sandbox_id),
    );
    for (const v of held) {
      const used = await this.store.measure(v.region, v.id);
      this.db
        .prepare(
          "UPDATE volumes SET attached_sandbox_id = NULL, status = 'available', used_bytes = ?, updated_at = ? WHERE id = ?",
        )
        .run(used ?? v.used_bytes, now, v.id);
    }
    const stale = this.db
      .prepare("SELECT * FROM volumes WHERE status IN ('creating','moving','deleting','error')")
      .all() as VolumeRow[];
    for (const v of stale) {
      if (v.status === "moving" && v.move_to) {
        const outcome = await this.store.recoverMove(v.id, v.region, v.move_to);
        if (outcome === "moved") {
          this.db
            .prepare(
              "UPDATE volumes SET region = move_to, move_to = NULL, status = 'available', updated_at = ? WHERE id = ?",
            )
            .run(now, v.id);
          this.events.recordFor(v.account_id, "volume.moved", {
            volume: await this.view(this.byId(v.id)),
            from_region: v.region,
            to_region: v.move_to,
          });
        } else
          this.db
            .prepare("UPDATE volumes SET move_to = NULL, status = 'available', updated_at = ? WHERE id = ?")
            .run(now, v.id);
      } else if (v.status === "deleting" || v.status === "creating") {
        // A create that never finished has no usable filesystem; a delete that never finished is finished.
        await this.store.remove(v.region, v.id);
        this.db.prepare("DELETE FROM volumes WHERE id = ?").run(v.id);
        if (v.status === "deleting")
          this.events.recordFor(v.account_id, "volume.deleted", {
            volume: { id: v.id, name: v.name, region: v.region },
            reason: "delete finished after an engine restart",
          });
      } else this.db.prepare("UPDATE volumes SET status = 'available', updated_at = ? WHERE id = ?").run(now, v.id);
    }
    await this.store.sweepStaleMountPoints();
  }

  startSweeper(): void {
    this.sweeper = setInterval(() => void this.sweepExpired(), this.config.volumeSweepMs);
    this.sweeper.unref();
  }

  private expiresAt(row: Pick<VolumeRow, "created_at" | "lifetime_hours">): number | null {
    return row.lifetime_hours === null ? null : row.created_at + row.lifetime_hours * this.config.volumeHourMs;
  }

  /**
   * Deletes detached volumes past their max lifetime. The rows go at once (synchronously, so a
   * create in the same tick cannot attach one); the images follow.
   */
  sweepExpired(): Promise<void> {
    const now = Date.now();
    const rows = this.db
      .prepare(
        "SELECT * FROM volumes WHERE lifetime_hours IS NOT NULL AND status = 'available' AND attached_sandbox_id IS NULL",
      )
      .all() as VolumeRow[];
    const removals: Promise<void>[] = [];
    for (const row of rows) {
      if (this.busy.has(row.id) || (this.expiresAt(row) ?? Infinity) > now) continue;
      this.db.prepare("DELETE FROM volumes WHERE id = ?").run(row.id);
      const view = this.viewWith(row, row.used_bytes);
      this.events.recordFor(row.account_id, "volume.deleted", {
        volume: { ...view, status: "deleting" },
        reason: "max_lifetime",
      });
      removals.push(
        this.store
          .remove(row.region, row.id)
          .catch((e: Error) => console.error(`[engine] removing expired volume ${row.id} failed: ${e.message}`)),
      );
    }
    return Promise.all(removals).then(() => undefined);
  }

  /**
   * Engine shutdown, after the sandboxes. `keepAttached` (an upgrade stop): a volume still attached
   * is held by a sandbox that keeps running (every other was detached as its sandbox ended), so it
   * stays mounted for the next engine to adopt (adoptAttachment).
   */
  async close(opts: { keepAttached?: boolean } = {}): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    await Promise.allSettled([...this.moves]);
    await this.store.close(
      (id) => this.byIdOrNone(id)?.region,
      (id) => opts.keepAttached === true && this.byIdOrNone(id)?.status === "attached",
    );
  }

  // ------------------------------------------------------------------------------------------
  // Reading

  /** One of the account's volumes, by id (any case) or by name. */
  find(account: string, ref: string): VolumeRow | undefined {
    return this.db
      .prepare("SELECT * FROM volumes WHERE account_id = ? AND (id = ? COLLATE NOCASE OR name = ?)")
      .get(account, ref, ref) as VolumeRow | undefined;
  }

  get(account: string, ref: string): VolumeRow {
    const row = this.find(account, ref);
    if (!row) throw new ApiError("volume_not_found", `Volume ${ref} not found`);
    return row;
  }

  private byIdOrNone(id: string): VolumeRow | undefined {
    return this.db.prepare("SELECT * FROM volumes WHERE id = ?").get(id) as VolumeRow | undefined;
  }

  /** A volume the engine itself works on (restart, attach, move): by exact id, any account. */
  private byId(id: string): VolumeRow {
    const row = this.byIdOrNone(id);
    if (!row) throw new ApiError("volume_not_found", `Volume ${id} not found`);
    return row;
  }

  private viewWith(row: VolumeRow, usedBytes: number): VolumeView {
    const expires = this.expiresAt(row);
    return {
      id: row.id,
      name: row.name,
      size_gb: row.size_gb,
      size_mb: Math.round(usedBytes / (1024 * 1024)),
      status: row.status,
      region: row.region,
      attached_sandbox_id: row.attached_sandbox_id,
      mount_path: VOLUME_MOUNT_PATH,
      max_lifetime_hours: row.lifetime_hours,
      max_lifetime_days: row.lifetime_hours !== null && row.lifetime_hours % 24 === 0 ? row.lifetime_hours / 24 : null,
      expires_at: isoOrNull(expires),
      created_at: iso(row.created_at),
      updated_at: iso(row.updated_at),
      size_enforced: this.store.sizeEnforced,
    };
  }

  /** size_mb is the space really used: measured live while mounted, else as of the last detach. */
  async view(row: VolumeRow): Promise<VolumeView> {
    const live =
      this.store.isMounted(row.id) || this.store.backend === "directory"
        ? await this.store.usedBytes(row.region, row.id)
        : null;
    return this.viewWith(row, live ?? row.used_bytes);
  }

  async list(
    account: string,
    filter: { region?: string; status?: string; limit: number; cursor?: string },
  ): Promise<{ items: VolumeView[]; next: string | null }> {
    const where: Condition[] = [["account_id = ?", account]];
    if (filter.region) where.push(["region = ?", filter.region]);
    if (filter.status) where.push(["status = ?", filter.status]);
    const { items, next } = pageNewestFirst<VolumeRow>(this.db, "volumes", where, filter);
    return { items: await Promise.all(items.map((r) => this.view(r))), next };
  }

  ref(volumeId: string | null): VolumeRef | null {
    if (!volumeId) return null;
    const row = this.db.prepare("SELECT name FROM volumes WHERE id = ?").get(volumeId) as { name: string } | undefined;
    return { id: volumeId, name: row?.name ?? null, mount_path: VOLUME_MOUNT_PATH };
  }

  // ------------------------------------------------------------------------------------------
  // Managing volumes (POST/PATCH/DELETE /v1/volumes, move)

  private checkRegion(region: string): void {
    if (!(REGIONS as readonly string[]).includes(region)) {
      throw new ApiError("region_unavailable", `Region "${region}" is not available; regions: ${REGIONS.join(", ")}`, {
        regions: REGIONS,
      });
    }
  }

  private checkSize(sizeGb: number): void {
    if (sizeGb > this.plan.maxVolumeGb) {
      throw new ApiError(
        "plan_limit",
        `The ${this.plan.name} plan allows volumes of at most ${this.plan.maxVolumeGb} GB`,
        { max_volume_gb: this.plan.maxVolumeGb },
      );
    }
  }

  private checkCount(account: string): void {
    const n = (this.db.prepare("SELECT COUNT(*) AS n FROM volumes WHERE account_id = ?").get(account) as { n: number })
      .n;
    if (n >= this.plan.maxVolumes) {
      throw new ApiError(
        "plan_limit",
        `The ${this.plan.name} plan keeps at most ${this.plan.maxVolumes} volume(s); delete one first`,
        { max_volumes: this.plan.maxVolumes },
      );
    }
  }

  private checkNameFree(account: string, name: string, except?: string): void {
    const other = this.db.prepare("SELECT id FROM volumes WHERE account_id = ? AND name = ?").get(account, name) as
      { id: string } | undefined;
    if (other && other.id !== except)
      throw new ApiError("volume_name_taken", `A volume named "${name}" already exists`, { name });
  }

  /** Records a new volume row; synchronous with its checks so concurrent creates cannot both pass them. */
  private insert(input: {
    account: string;
    name: string;
    sizeGb: number;
    region: string;
    lifetimeHours: number | null;
    holder: string | null;
  }): string {
    const id = newId("vol");
    const now = Date.now();
    this.db
      .prepare(
        "INSERT INTO volumes(id, account_id, name, size_gb, region, status, attached_sandbox_id, lifetime_hours, created_at, updated_at) VALUES (?,?,?,?,?,'creating',?,?,?,?)",
      )
      .run(id, input.account, input.name, input.sizeGb, input.region, input.holder, input.lifetimeHours, now, now);
    return id;
  }

  /** Makes the filesystem of a row inserted as 'creating'; the row goes if that fails. */
  private async materialize(id: string): Promise<void> {
    const row = this.byId(id);
    try {
      await this.store.create(row.region, row.id, row.size_gb);
    } catch (e) {
      this.db.prepare("DELETE FROM volumes WHERE id = ?").run(id);
      throw ApiError.internal(`Creating volume ${row.name} failed`, e);
    }
  }

  async create(account: string, input: CreateVolumeInput): Promise<VolumeView> {
    const region = input.region ?? REGIONS[0];
    this.checkRegion(region);
    this.checkSize(input.size_gb);
    this.checkNameFree(account, input.name);
    this.checkCount(account);
    this.admission.admitVolumeGb(input.size_gb);
    const id = this.insert({
      account,
      name: input.name,
      sizeGb: input.size_gb,
      region,
      lifetimeHours: input.lifetimeHours,
      holder: null,
    });
    await this.materialize(id);
    this.db.prepare("UPDATE volumes SET status = 'available', updated_at = ? WHERE id = ?").run(Date.now(), id);
    const view = await this.view(this.byId(id));
    this.events.recordFor(account, "volume.created", { volume: view });
    return view;
  }

  private inUse(row: VolumeRow, doing: string): ApiError {
    if (row.attached_sandbox_id) {
      return new ApiError(
        "volume_in_use",
        `Volume ${row.name} is attached to sandbox ${row.attached_sandbox_id}; terminate it before you ${doing}`,
        { attached_sandbox_id: row.attached_sandbox_id },
      );
    }
    return new ApiError(
      "volume_in_use",
      `Volume ${row.name} is ${this.busy.has(row.id) ? "being changed" : row.status} right now; try again once it is available`,
      { status: row.status },
    );
  }

  /** Runs a change that needs the volume detached and idle, holding it busy meanwhile. */
  private async exclusive<T>(row: VolumeRow, doing: string, fn: () => Promise<T>): Promise<T> {
    if (row.status !== "available" || row.attached_sandbox_id || this.busy.has(row.id)) throw this.inUse(row, doing);
    this.busy.add(row.id);
    try {
      return await fn();
    } finally {
      this.busy.delete(row.id);
    }
  }

  async update(account: string, ref: string, input: UpdateVolumeInput): Promise<VolumeView> {
    const row = this.get(account, ref);
    if (input.name !== undefined && input.name !== row.name) this.checkNameFree(account, input.name, row.id);
    if (input.size_gb !== undefined && input.size_gb !== row.size_gb) {
      if (input.size_gb < row.size_gb)
        throw new ApiError("cannot_shrink", `Volume ${row.name} is ${row.size_gb} GB; volumes only grow`, {
          size_gb: row.size_gb,
        });
      this.checkSize(input.size_gb);
      this.admission.admitVolumeGb(input.size_gb - row.size_gb, `growing volume ${row.name}`);
      const size = input.size_gb;
      await this.exclusive(row, "resize it", async () => {
        await this.store.grow(row.region, row.id, size);
        this.db.prepare("UPDATE volumes SET size_gb = ?, updated_at = ? WHERE id = ?").run(size, Date.now(), row.id);
      });
    }
    if (input.name !== undefined)
      this.db.prepare("UPDATE volumes SET name = ?, updated_at = ? WHERE id = ?").run(input.name, Date.now(), row.id);
    if (input.lifetimeHours !== undefined)
      this.db
        .prepare("UPDATE volumes SET lifetime_hours = ?, updated_at = ? WHERE id = ?")
        .run(input.lifetimeHours, Date.now(), row.id);
    return this.view(this.byId(row.id));
  }

  async remove(account: string, ref: string): Promise<void> {
    const row = this.get(account, ref);
    await this.exclusive(row, "delete it", async () => {
      this.db.prepare("UPDATE volumes SET status = 'deleting', updated_at = ? WHERE id = ?").run(Date.now(), row.id);
      const view = await this.view(this.byId(row.id));
      await this.store.remove(row.region, row.id);
      this.db.prepare("DELETE FROM volumes WHERE id = ?").run(row.id);
      this.events.recordFor(account, "volume.deleted", { volume: view, reason: "api" });
    });
  }

  /** Starts a move (202): the copy runs in the background; `volume.moved` says when it is done. */
  async move(account: string, ref: string, region: string): Promise<VolumeView> {
    const row = this.get(account, ref);
    this.checkRegion(region);
    if (row.region === region && row.status !== "moving") return this.view(row);
    if (row.status !== "available" || row.attached_sandbox_id || this.busy.has(row.id))
      throw this.inUse(row, "move it");
    this.db
      .prepare("UPDATE volumes SET status = 'moving', move_to = ?, updated_at = ? WHERE id = ?")
      .run(region, Date.now(), row.id);
    const from = row.region;
    const work = (async () => {
      try {
        await this.store.move(row.id, from, region);
        this.db
          .prepare("UPDATE volumes SET region = ?, move_to = NULL, status = 'available', updated_at = ? WHERE id = ?")
          .run(region, Date.now(), row.id);
        this.events.recordFor(account, "volume.moved", {
          volume: await this.view(this.byId(row.id)),
          from_region: from,
          to_region: region,
        });
      } catch (e) {
        this.db
          .prepare("UPDATE volumes SET move_to = NULL, status = 'available', updated_at = ? WHERE id = ?")
          .run(Date.now(), row.id);
        this.events.recordFor(account, "volume.move_failed", {
          volume_id: row.id,
          from_region: from,
          to_region: region,
          error: (e as Error).message,
        });
      }
    })();
    this.moves.add(work);
    void work.finally(() => this.moves.delete(work));
    return this.view(this.byId(row.id));
  }

  // ------------------------------------------------------------------------------------------
  // Attaching to sandboxes (called by sandbox create and release)

  /**
   * Resolves `volume` of a create before anything changes: an existing volume by id or name (its
   * region pins the sandbox's), or a name to create on first reference in the sandbox's region.
   */
  planAttach(account: string, ref: string, region: string | null): VolumePlan {
    // A volume past its deadline is gone, even if the sweep has not come round yet.
    void this.sweepExpired();
    const existing = this.find(account, ref) ?? null;
    if (existing) {
      if (region && existing.region !== region) {
        throw new ApiError(
          "volume_region_mismatch",
          `Volume ${existing.name} lives in ${existing.region}, not ${region}: omit region (the sandbox then runs in ${existing.region}) or move the volume first`,
          { volume_region: existing.region },
        );
      }
      if (existing.status !== "available" || existing.attached_sandbox_id || this.busy.has(existing.id))
        throw this.inUse(existing, "attach it elsewhere");
      return { account, existing, name: existing.name, region: existing.region };
    }
    if (/^vol_/i.test(ref)) throw new ApiError("volume_not_found", `Volume ${ref} not found`);
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(ref)) {
      throw new ApiError("validation_error", [
        {
          loc: ["body", "volume"],
          msg: "a new volume's name is 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit",
          type: "value_error",
        },
      ]);
    }
    this.checkSize(Math.min(DEFAULT_VOLUME_GB, this.plan.maxVolumeGb));
    this.checkCount(account);
    this.admission.admitVolumeGb(Math.min(DEFAULT_VOLUME_GB, this.plan.maxVolumeGb), `the new volume ${ref}`);
    return { account, existing: null, name: ref, region };
  }

  /**
   * Makes `sandboxId` the holder, synchronously (no other create can slip in between). A volume
   * named for the first time is recorded here and made in attach().
   */
  claim(plan: VolumePlan, sandboxId: string, region: string): string {
    if (!plan.existing) {
      // Another create named it first (and holds it now).
      const raced = this.find(plan.account, plan.name);
      if (raced) throw this.inUse(raced, "attach it elsewhere");
      this.checkCount(plan.account);
      return this.insert({
        account: plan.account,
        name: plan.name,
        sizeGb: Math.min(DEFAULT_VOLUME_GB, this.plan.maxVolumeGb),
        region,
        lifetimeHours: null,
        holder: sandboxId,
      });
    }
    if (this.busy.has(plan.existing.id)) throw this.inUse(this.byId(plan.existing.id), "attach it elsewhere");
    const r = this.db
      .prepare(
        "UPDATE volumes SET status = 'attached', attached_sandbox_id = ?, updated_at = ? WHERE id = ? AND status = 'available' AND attached_sandbox_id IS NULL",
      )
      .run(sandboxId, Date.now(), plan.existing.id);
    if (r.changes === 0) throw this.inUse(this.byIdOrNone(plan.existing.id) ?? plan.existing, "attach it elsewhere");
    return plan.existing.id;
  }

  /** Mounts the claimed volume for the sandbox's uid; returns the host path to bind at /persist. */
  async attach(volumeId: string, uid: number): Promise<string> {
    let row = this.byId(volumeId);
    if (row.status === "creating") {
      await this.materialize(row.id);
      this.db.prepare("UPDATE volumes SET status = 'attached', updated_at = ? WHERE id = ?").run(Date.now(), row.id);
      row = this.byId(row.id);
      this.events.recordFor(row.account_id, "volume.created", { volume: await this.view(row) });
    }
    const src = await this.store.attach(row.region, row.id, uid, row.owner_uid);
    this.db.prepare("UPDATE volumes SET owner_uid = ? WHERE id = ?").run(uid, row.id);
    return src;
  }

  /** The holder is gone (terminated, failed, engine shutdown): unmount and free the volume. */
  async detach(sandboxId: string): Promise<void> {
    const row = this.db.prepare("SELECT * FROM volumes WHERE attached_sandbox_id = ?").get(sandboxId) as
      VolumeRow | undefined;
    if (!row) return;
    if (row.status === "creating") {
      // Its filesystem was never made (the sandbox failed first): nothing to keep.
      await this.store.remove(row.region, row.id);
      this.db.prepare("DELETE FROM volumes WHERE id = ?").run(row.id);
      return;
    }
    const used = await this.store.usedBytes(row.region, row.id);
    await this.store.detach(row.region, row.id);
    this.db
      .prepare(
        "UPDATE volumes SET status = 'available', attached_sandbox_id = NULL, used_bytes = ?, updated_at = ? WHERE id = ?",
      )
      .run(used ?? row.used_bytes, Date.now(), row.id);
  }
}
