import { ApiError } from "../../errors.js";
import { canonicalId } from "../../lib/ids.js";
import type { Db } from "../../store/db.js";
import { pageNewestFirst, type Condition, type Page } from "../../store/paging.js";

export type SandboxStatus =
  "creating" | "running" | "pausing" | "paused" | "resuming" | "terminated" | "expired" | "failed";

/** The end states: such a sandbox has no processes and never runs again. */
export const GONE: readonly SandboxStatus[] = ["terminated", "expired", "failed"];

/** Statuses that hold memory (the plan's RAM budget) and a slot; paused ones are counted apart. */
const LIVE = "('creating','running','resuming','pausing')";

export interface SandboxRow {
  id: string;
  /** The account it belongs to: every lookup on behalf of a request is scoped by it. */
  account_id: string;
  status: SandboxStatus;
  template: string;
  size: string;
  cpu: number;
  memory_mb: number;
  network: "off" | "restricted" | "open";
  allow_domains: string | null;
  region: string;
  metadata: string;
  env_keys: string;
  timeout_seconds: number;
  on_timeout: "kill" | "pause";
  auto_resume: number;
  preview_auth: number;
  preview_token_hash: string | null;
  uid: number;
  created_at: number;
  started_at: number | null;
  expires_at: number | null;
  paused_at: number | null;
  terminated_at: number | null;
  running_since: number | null;
  status_reason: string | null;
  cpu_seconds: number;
  gb_seconds: number;
  /** The named snapshot it was forked from, and the volume it holds (or held). */
  snapshot_id: string | null;
  volume_id: string | null;
}

/** The columns a create writes; the rest start NULL or at their defaults. */
export type NewSandboxRow = Pick<
  SandboxRow,
  | "id"
  | "account_id"
  | "template"
  | "size"
  | "cpu"
  | "memory_mb"
  | "network"
  | "allow_domains"
  | "region"
  | "metadata"
  | "env_keys"
  | "timeout_seconds"
  | "on_timeout"
  | "auto_resume"
  | "preview_auth"
  | "preview_token_hash"
  | "uid"
  | "created_at"
>;

export interface SandboxFilter {
  statuses: string[];
  metadata: Record<string, string>;
  template?: string;
  region?: string;
  /** Only the children of this named snapshot (the id each fork keeps in snapshot_id). */
  snapshotId?: string;
  limit: number;
  cursor?: string;
}

/** The sandboxes table: every SQL statement about sandboxes the lifecycle needs, by what it means. */
export class SandboxRepository {
  constructor(private readonly db: Db) {}

  /**
   * A sandbox of `account`. Another account's sandbox is exactly as unknown as one that never
   * existed: the same lookup, the same 404.
   */
  row(account: string, id: string): SandboxRow | undefined {
    return this.db.prepare("SELECT * FROM sandboxes WHERE id = ? AND account_id = ?").get(canonicalId(id), account) as
      SandboxRow | undefined;
  }

  getRow(account: string, id: string): SandboxRow {
    const row = this.row(account, id);
    if (!row) throw new ApiError("sandbox_not_found", `Sandbox ${id} not found`);
    return row;
  }

  /**
   * Any account's sandbox, by exact id: only for the engine's own work (timers, the sampler,
   * webhooks) and for preview hosts, whose URL names the sandbox itself. Never for an API lookup.
   */
  rowUnscoped(id: string): SandboxRow | undefined {
    return this.db.prepare("SELECT * FROM sandboxes WHERE id = ?").get(canonicalId(id)) as SandboxRow | undefined;
  }

  rowById(id: string): SandboxRow {
    const row = this.rowUnscoped(id);
    if (!row) throw new ApiError("sandbox_not_found", `Sandbox ${id} not found`);
    return row;
  }

  /** One page of the account's sandboxes, newest first; without a status filter the ended ones are left out. */
  list(account: string, filter: SandboxFilter): Page<SandboxRow> {
    const where: Condition[] = [["account_id = ?", account]];
    if (filter.statuses.length)
      where.push([`status IN (${filter.statuses.map(() => "?").join(",")})`, ...filter.statuses]);
    else where.push(["status NOT IN ('terminated','expired')"]);
    for (const [k, v] of Object.entries(filter.metadata)) {
      // json_each compares keys as data: no key can break out into a JSON path.
      where.push([
        "EXISTS (SELECT 1 FROM json_each(sandboxes.metadata) WHERE json_each.key = ? AND json_each.value = ?)",
        k,
        v,
      ]);
    }
    if (filter.template) where.push(["template = ?", filter.template]);
    if (filter.region) where.push(["region = ?", filter.region]);
    if (filter.snapshotId) where.push(["snapshot_id = ? COLLATE NOCASE", filter.snapshotId]);
    return pageNewestFirst<SandboxRow>(this.db, "sandboxes", where, filter);
  }

  /** Memory of an account's live (non-paused) sandboxes: the plan's concurrency gate is a RAM budget. */
  liveMemoryMb(account: string): number {
    return this.db
      .prepare(`SELECT COALESCE(SUM(memory_mb),0) FROM sandboxes WHERE account_id = ? AND status IN ${LIVE}`)
      .pluck()
      .get(account) as number;
  }

  pausedCount(account: string): number {
    return this.db
      .prepare(`SELECT COUNT(*) FROM sandboxes WHERE account_id = ? AND status = 'paused'`)
      .pluck()
      .get(account) as number;
  }

  runningCount(account: string): number {
    return this.db
      .prepare(`SELECT COUNT(*) FROM sandboxes WHERE account_id = ? AND status IN ${LIVE}`)
      .pluck()
      .get(account) as number;
  }

  /** Uids held by sandboxes whose processes exist or are being made (the uid pool skips them). */
  heldUids(): number[] {
    return this.db
      .prepare(`SELECT uid FROM sandboxes WHERE status IN ('creating','running','paused','pausing','resuming')`)
      .pluck()
      .all() as number[];
  }

  /** Sandboxes not in an end state (after a restart: their processes died with the last run). */
  notEnded(): { id: string; status: SandboxStatus }[] {
    return this.db
      .prepare(`SELECT id, status FROM sandboxes WHERE status NOT IN ('terminated','expired','failed')`)
      .all() as { id: string; status: SandboxStatus }[];
  }

  insert(row: NewSandboxRow): void {
    this.db
      .prepare(
        `INSERT INTO sandboxes(id,account_id,status,template,size,cpu,memory_mb,network,allow_domains,region,metadata,env_keys,timeout_seconds,on_timeout,auto_resume,preview_auth,preview_token_hash,uid,created_at)
         VALUES (@id,@account_id,'creating',@template,@size,@cpu,@memory_mb,@network,@allow_domains,@region,@metadata,@env_keys,@timeout_seconds,@on_timeout,@auto_resume,@preview_auth,@preview_token_hash,@uid,@created_at)`,
      )
      .run(row);
  }

  markFailed(id: string, reason: string, at: number): void {
    this.db
      .prepare("UPDATE sandboxes SET status='failed', status_reason=?, terminated_at=? WHERE id=?")
      .run(reason, at, id);
  }

  markRunning(id: string, startedAt: number, expiresAt: number): void {
    this.db
      .prepare("UPDATE sandboxes SET status='running', started_at=?, running_since=?, expires_at=? WHERE id=?")
      .run(startedAt, startedAt, expiresAt, id);
  }

  /** Terminated or expired: `reason` (when given) replaces the status reason, the countdown is gone. */
  markEnded(id: string, status: "terminated" | "expired", at: number, reason: string | null): void {
    this.db
      .prepare(
        "UPDATE sandboxes SET status=?, terminated_at=?, status_reason=COALESCE(?, status_reason), expires_at=NULL WHERE id=?",
      )
      .run(status, at, reason, id);
  }

  markPaused(id: string, at: number): void {
    this.db
      .prepare("UPDATE sandboxes SET status='paused', paused_at=?, expires_at=NULL, running_since=NULL WHERE id=?")
      .run(at, id);
  }

  markResumed(id: string, at: number, timeoutSeconds: number, expiresAt: number): void {
    this.db
      .prepare(
        "UPDATE sandboxes SET status='running', paused_at=NULL, running_since=?, timeout_seconds=?, expires_at=? WHERE id=?",
      )
      .run(at, timeoutSeconds, expiresAt, id);
  }

  setCountdown(id: string, timeoutSeconds: number, expiresAt: number): void {
    this.db
      .prepare("UPDATE sandboxes SET timeout_seconds=?, expires_at=? WHERE id=?")
      .run(timeoutSeconds, expiresAt, id);
  }

  setMetadata(id: string, metadata: Record<string, string>): void {
    this.db.prepare("UPDATE sandboxes SET metadata=? WHERE id=?").run(JSON.stringify(metadata), id);
  }

  setAutoResume(id: string, on: boolean): void {
    this.db.prepare("UPDATE sandboxes SET auto_resume=? WHERE id=?").run(on ? 1 : 0, id);
  }

  setOnTimeout(id: string, action: "kill" | "pause"): void {
    this.db.prepare("UPDATE sandboxes SET on_timeout=? WHERE id=?").run(action, id);
  }
}
