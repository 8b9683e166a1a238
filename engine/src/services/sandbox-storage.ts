import { ApiError } from "../errors.js";
import { REGIONS, SIZES } from "../plans.js";
import { sandboxDirs } from "../runtime/sandbox-proc.js";
import type { CreateSandboxBody } from "../schemas.js";
import type { Db } from "../store/db.js";
import type { SnapshotRow, SnapshotService } from "./snapshots.js";
import {
  DEFAULT_VOLUME_GB,
  VOLUME_MOUNT_PATH,
  type VolumePlan,
  type VolumeRef,
  type VolumeService,
} from "./volumes.js";

/** What a sandbox create brings from storage: the snapshot it forks and the volume it holds. */
export interface StoragePlan {
  snapshot: SnapshotRow | null;
  volume: VolumePlan | null;
  /** Set by claim(): the volume this sandbox now holds. */
  volumeId: string | null;
}

/**
 * The part of sandbox create, view and release that concerns named snapshots and volumes, kept
 * out of SandboxService so that file only calls in at a few marked points:
 * plan → (checks) → claim → insert → populate (in the boot's try) → abandon on failure; released()
 * when the sandbox's processes are gone.
 */
export class SandboxStorage {
  constructor(
    readonly snapshots: SnapshotService,
    readonly volumes: VolumeService,
    private readonly db: Db,
  ) {}

  /**
   * Before anything changes: resolves `snapshot` and `volume`, fills in what a snapshot implies
   * (its template, its size unless another is asked for, its region) and checks the region pins.
   */
  plan(account: string, body: CreateSandboxBody): { body: CreateSandboxBody; storage: StoragePlan } {
    const storage: StoragePlan = { snapshot: null, volume: null, volumeId: null };
    // An unknown region is the create's own 400 region_unavailable; pins are checked only for known ones.
    if (body.region && !(REGIONS as readonly string[]).includes(body.region)) return { body, storage };
    let effective = body;
    if (body.snapshot) {
      const snap = this.snapshots.get(account, body.snapshot);
      if (snap.status !== "ready")
        throw new ApiError("snapshot_not_found", `Snapshot ${snap.name} is still being created`);
      if (body.template && body.template !== snap.template) {
        throw new ApiError(
          "bad_request",
          `Snapshot ${snap.name} was taken from a "${snap.template}" sandbox; a fork runs that template (omit template)`,
          { snapshot_template: snap.template },
        );
      }
      if (body.region && body.region !== snap.region) {
        throw new ApiError(
          "snapshot_region_mismatch",
          `Snapshot ${snap.name} is in ${snap.region}; forks run there (omit region or pass "${snap.region}")`,
          { snapshot_region: snap.region },
        );
      }
      const inheritsSize = !body.size && body.cpu === undefined && body.memory_mb === undefined && snap.size in SIZES;
      effective = {
        ...body,
        template: snap.template,
        region: snap.region,
        ...(inheritsSize ? { size: snap.size as keyof typeof SIZES } : {}),
      };
      storage.snapshot = snap;
    }
    if (body.volume) {
      const ref = typeof body.volume === "string" ? body.volume : body.volume.id;
      if (
        typeof body.volume === "object" &&
        body.volume.mount_path !== undefined &&
        body.volume.mount_path !== VOLUME_MOUNT_PATH
      ) {
        throw new ApiError("validation_error", [
          { loc: ["body", "volume", "mount_path"], msg: `volumes mount at ${VOLUME_MOUNT_PATH}`, type: "value_error" },
        ]);
      }
      storage.volume = this.volumes.planAttach(account, ref, effective.region ?? null);
      if (!effective.region && storage.volume.region) effective = { ...effective, region: storage.volume.region };
    }
    return { body: effective, storage };
  }

  /** Right before the sandbox row is written (same tick): the sandbox becomes the volume's holder. */
  claim(storage: StoragePlan, sandboxId: string, region: string): void {
    if (storage.volume) storage.volumeId = this.volumes.claim(storage.volume, sandboxId, region);
  }

  /**
   * During the boot, before the sandbox's first process: fills its scratch from the snapshot and
   * mounts its volume. Returns the extra binds for the sandbox's mount namespace.
   */
  async populate(
    storage: StoragePlan,
    sandboxId: string,
    dir: string,
    uid: number,
  ): Promise<{ src: string; dest: string }[]> {
    this.db
      .prepare("UPDATE sandboxes SET snapshot_id = ?, volume_id = ? WHERE id = ?")
      .run(storage.snapshot?.id ?? null, storage.volumeId, sandboxId);
    if (storage.snapshot) await this.snapshots.seed(storage.snapshot.id, sandboxDirs(dir), uid);
    if (!storage.volumeId) return [];
    return [{ src: await this.volumes.attach(storage.volumeId, uid), dest: VOLUME_MOUNT_PATH }];
  }

  /** What the timeline's sandbox.created adds: the snapshot it forked and the volume it holds. */
  createdEventData(storage: StoragePlan | undefined): { snapshot_id?: string; volume_id?: string } {
    return {
      ...(storage?.snapshot ? { snapshot_id: storage.snapshot.id } : {}),
      ...(storage?.volumeId ? { volume_id: storage.volumeId } : {}),
    };
  }

  /** The boot failed: let go of the volume. */
  abandon(sandboxId: string): Promise<void> {
    return this.volumes.detach(sandboxId);
  }

  /** The sandbox's processes are gone (terminate, failure, shutdown): its volume is free again. */
  released(sandboxId: string): Promise<void> {
    return this.volumes.detach(sandboxId);
  }

  volumeRef(volumeId: string | null): VolumeRef | null {
    return this.volumes.ref(volumeId);
  }

  /** The limits fields about storage (GET /v1/sandboxes/limits), beside the plan's caps. */
  limits(account: string): {
    named_snapshots: number;
    volumes: number;
    default_volume_size_gb: number;
    volume_size_enforced: boolean;
    snapshots_include_memory: false;
  } {
    const count = (table: "snapshots" | "volumes") =>
      (this.db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE account_id = ?`).get(account) as { n: number }).n;
    return {
      named_snapshots: count("snapshots"),
      volumes: count("volumes"),
      default_volume_size_gb: DEFAULT_VOLUME_GB,
      volume_size_enforced: this.volumes.store.sizeEnforced,
      snapshots_include_memory: false,
    };
  }
}
