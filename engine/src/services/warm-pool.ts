import { randomBytes } from "node:crypto";
import type { NetworkHandle } from "../runtime/network.js";
import type { SandboxProcess } from "../runtime/sandbox-proc.js";

/**
 * One booted sandbox the pool holds: no account, no row in the sandboxes table, nothing ever run
 * inside. `key` names its directory, cgroups and hostname; it is not a sandbox id: the claim mints
 * a fresh id, so ids keep sorting by creation (paging relies on it) and tell nothing of the pool.
 */
export interface PoolMember {
  key: string;
  uid: number;
  /** The built-in image it runs (aliases resolved). */
  templateId: string;
  proc: SandboxProcess;
  network: NetworkHandle;
}

/** What the pool asks of the engine; the sandbox service supplies the real ones (services/sandboxes/pool-boot.ts). */
export interface PoolDeps {
  boot(spec: { key: string; uid: number; templateId: string }): Promise<PoolMember>;
  /** Ends a member that was never claimed: processes, cgroups, directories. */
  destroy(member: PoolMember): Promise<void>;
  /** A host uid no sandbox holds, the pool's own booting and ready members included; throws when none is left. */
  allocateUid(): number;
  /** Whether the machine can hold one more member now (host admission: memory and pids). */
  hasRoom(): boolean;
  /** Crash bookkeeping: a member is the pool's from before its boot until it is claimed or destroyed. */
  remember(key: string, uid: number, pid: number | null): void;
  forget(key: string): void;
  log(message: string): void;
}

/** Refill waits until no API request has been in flight for this long: it never competes with one. */
export const QUIET_MS = 25;
/** ...but not longer than this: a steady stream of requests (or a long exec stream) never starves the pool. */
export const MAX_WAIT_MS = 1000;
/** After a failed boot or a full machine, the next attempt waits this long. */
export const RETRY_MS = 5000;

/** Pool keys: "sbx_pool" + random hex, so the hostname (sbx-pool…) carries no creation time. */
export function poolKey(): string {
  return `sbx_pool${randomBytes(12).toString("hex")}`;
}

/**
 * Booted sandboxes kept ready so a create skips the boot (bwrap, cgroups, scratch mount): `size`
 * per template in `templates`. A member is handed out once, by take(), and from then on is an
 * ordinary sandbox of the claiming account; it never comes back. Members that die while pooled
 * are replaced. Refill runs in the background once the API is quiet (requestStarted/requestEnded
 * bracket every request), one boot at a time, and only where host admission has room: the pool
 * gives way to customers (evictOne) and is drained on shutdown.
 */
export class WarmPool {
  private readonly ready = new Map<string, PoolMember>();
  private readonly booting = new Map<string, { templateId: string; uid: number }>();
  /** Members being destroyed: their uids stay taken until no process of theirs can be left. */
  private readonly ending = new Map<string, number>();
  private inFlight = 0;
  private lastActivity = 0;
  private closing = false;
  private running: Promise<void> | null = null;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(
    /** Members kept ready per template (0: no pool). */
    readonly size: number,
    /** Built-in image ids the pool holds. */
    readonly templates: readonly string[],
    /** Every member's memory limit (MiB): what host admission counts for each. */
    readonly memoryMb: number,
    private readonly deps: PoolDeps,
  ) {}

  get enabled(): boolean {
    return this.size > 0 && this.templates.length > 0;
  }

  serves(templateId: string): boolean {
    return this.enabled && this.templates.includes(templateId);
  }

  /** Starts filling the pool (at engine start, after boot reconciliation). */
  start(): void {
    this.kick();
  }

  /**
   * A ready member of `templateId`, no longer the pool's: never handed out twice, never returned.
   * Undefined when none is ready (the caller boots one cold). Either way a refill is scheduled.
   */
  take(templateId: string): PoolMember | undefined {
    let found: PoolMember | undefined;
    for (const m of this.ready.values()) {
      if (m.templateId === templateId && !m.proc.exited) {
        found = m;
        break;
      }
    }
    if (found) {
      this.ready.delete(found.key);
      this.deps.forget(found.key);
    }
    this.kick();
    return found;
  }

  /** Ends a member take() handed out whose claim failed before it became a sandbox of anyone's. */
  discardTaken(m: PoolMember): Promise<void> {
    return this.discard(m);
  }

  /**
   * Ends one ready member so a create the machine is short for fits; false when none is ready.
   * Its commitment goes at once (admission reads ready and booting members), its processes soon after.
   */
  evictOne(): boolean {
    const m = this.ready.values().next().value;
    if (!m) return false;
    this.ready.delete(m.key);
    void this.discard(m);
    return true;
  }

  /** Uids held by members, booting, ready or being ended (the uid allocator skips them). */
  uids(): number[] {
    return [
      ...[...this.ready.values()].map((m) => m.uid),
      ...[...this.booting.values()].map((b) => b.uid),
      ...this.ending.values(),
    ];
  }

  /** What host admission counts for the pool: every member booting or ready. */
  commitment(): { count: number; memoryMb: number; threads: number } {
    const count = this.ready.size + this.booting.size;
    let threads = 0;
    for (const m of this.ready.values()) threads += m.proc.cgroup.taskCount() ?? 0;
    return { count, memoryMb: count * this.memoryMb, threads };
  }

  /** For the limits response and the bench. */
  status(): { size: number; templates: string[]; ready: number; booting: number } {
    return { size: this.size, templates: [...this.templates], ready: this.ready.size, booting: this.booting.size };
  }

  requestStarted(): void {
    this.inFlight++;
    this.lastActivity = performance.now();
  }

  requestEnded(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    this.lastActivity = performance.now();
  }

  /** Engine shutdown: no more boots; every member, ready or still booting, is destroyed. */
  async drain(): Promise<void> {
    this.closing = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    await this.running;
    const members = [...this.ready.values()];
    this.ready.clear();
    await Promise.all(members.map((m) => this.discard(m)));
  }

  private kick(): void {
    // While a retry is pending (a failed boot, a full machine) creates do not bring it forward.
    if (this.closing || this.running || this.retryTimer || !this.enabled) return;
    this.running = this.refill()
      .catch((e: Error) => this.deps.log(`warm pool: refill stopped: ${e.message}`))
      .finally(() => {
        this.running = null;
      });
  }

  /** The first template short of `size`, counting members still booting. */
  private shortOf(): string | undefined {
    for (const t of this.templates) {
      let have = 0;
      for (const m of this.ready.values()) if (m.templateId === t) have++;
      for (const b of this.booting.values()) if (b.templateId === t) have++;
      if (have < this.size) return t;
    }
    return undefined;
  }

  private async refill(): Promise<void> {
    for (;;) {
      await this.quiet();
      const templateId = this.shortOf();
      if (this.closing || !templateId) return;
      if (!this.deps.hasRoom()) return this.retryLater();
      let uid: number;
      try {
        uid = this.deps.allocateUid();
      } catch {
        return this.retryLater();
      }
      const key = poolKey();
      this.booting.set(key, { templateId, uid });
      this.deps.remember(key, uid, null);
      let member: PoolMember;
      try {
        member = await this.deps.boot({ key, uid, templateId });
      } catch (e) {
        this.booting.delete(key);
        this.deps.forget(key);
        this.deps.log(`warm pool: booting a ${templateId} sandbox failed: ${(e as Error).message}`);
        return this.retryLater();
      } finally {
        this.booting.delete(key);
      }
      if (this.closing) {
        await this.discard(member);
        return;
      }
      this.ready.set(key, member);
      this.deps.remember(key, uid, member.proc.targetPid);
      // Only while pooled: once claimed, the sandbox service watches it like any other.
      member.proc.onExit(() => {
        if (!this.ready.delete(key)) return;
        void this.discard(member);
        this.kick();
      });
    }
  }

  /**
   * Resolves once no request has been in flight for QUIET_MS, or after MAX_WAIT_MS. It first lets
   * the current macrotask finish, so the answer of the create that took a member goes out first.
   */
  private async quiet(): Promise<void> {
    await new Promise<void>((r) => setImmediate(r));
    const started = performance.now();
    while (!this.closing && performance.now() - started < MAX_WAIT_MS) {
      const calm = performance.now() - this.lastActivity;
      if (this.inFlight === 0 && calm >= QUIET_MS) return;
      await new Promise<void>((r) => setTimeout(r, this.inFlight === 0 ? Math.max(1, QUIET_MS - calm) : QUIET_MS));
    }
  }

  private retryLater(): void {
    if (this.closing || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.kick();
    }, RETRY_MS);
    this.retryTimer.unref();
  }

  private async discard(m: PoolMember): Promise<void> {
    this.ending.set(m.key, m.uid);
    try {
      await this.deps.destroy(m);
      this.deps.forget(m.key);
    } catch (e) {
      // Its marker stays, so the next engine start ends whatever is left of it.
      this.deps.log(`warm pool: ending ${m.key} failed: ${(e as Error).message}`);
    } finally {
      this.ending.delete(m.key);
    }
  }
}
