import "server-only";
import type { Db } from "./db/index";
import { acquireLease, processHolder } from "./db/leases";
import { scheduleLeasedJob, type LeasedJobSchedule, type TimerApi } from "./leased-job";
import { purgeRateLimits } from "./db/rate-limit";
import { purgeSessions } from "./db/sessions";
import { applyAuditRetention } from "./audit/retention";
import { drainAuditOutbox, startAuditStream, stopAuditStream } from "./audit/stream";
import { startUsageReader, stopUsageReader } from "./usage/reader";

// Housekeeping: sessions that ended a week ago and rate-limit windows that closed an hour ago are
// deleted, or those tables only ever grow. Started once per process by getMigratedDb()
// (lib/server/db/index.ts), so whichever server runs Baton (the console server, `next start`,
// `next dev`) does it; the timer is unref'd and never keeps a process alive.
//
// Several Baton processes may share one Postgres: each schedules its own pass, and a pass first
// takes the `housekeeping` lease for one period (lib/server/db/leases.ts, without renewal), so at
// most one of them does the deletes per period. The deletes are idempotent either way.

export const HOUSEKEEPING = {
  /** How often a pass runs (and the period one pass claims across processes). */
  intervalMs: 60 * 60_000,
  /** The first pass, after start: not in the way of the first requests. */
  firstDelayMs: 30_000,
  /** Sessions that expired or were revoked longer ago than this are deleted. */
  sessionKeepMs: 7 * 24 * 60 * 60_000,
  /** Rate-limit windows that started longer ago than this are over (the longest is 15 minutes). */
  rateLimitKeepMs: 60 * 60_000,
} as const;

const LEASE = "housekeeping";

export interface HousekeepingResult {
  sessions: number;
  rateLimits: number;
  /** Audit rows that retention deleted (each team's purge is itself an `audit.purge` row). */
  auditPurged: number;
}

/**
 * One pass at `now`, unless another process (or this one) already ran one less than `intervalMs`
 * ago: then null. Cheap: one upsert, two indexed or small deletes. `holder` names this process in
 * the lease (processHolder(); tests play several).
 */
export async function runHousekeeping(
  db: Db,
  now = Date.now(),
  intervalMs: number = HOUSEKEEPING.intervalMs,
  holder: string = processHolder(),
): Promise<HousekeepingResult | null> {
  const claimed = await acquireLease(db, { name: LEASE, holder, now, ttlMs: intervalMs, renew: false });
  if (!claimed) return null;
  const sessions = await purgeSessions(db, { now, keepMs: HOUSEKEEPING.sessionKeepMs });
  const rateLimits = await purgeRateLimits(db, HOUSEKEEPING.rateLimitKeepMs, now);
  const purged = await applyAuditRetention(db, now);
  // Rows whose retries are due (the stream's own poller sends new ones within seconds).
  await drainAuditOutbox(db, { now, holder }).catch(() => null);
  return { sessions, rateLimits, auditPurged: purged.reduce((n, p) => n + p.deleted, 0) };
}

export type { TimerApi };

export interface HousekeepingOptions {
  /** The database to clean, or null while there is none open (then the pass is skipped). */
  db: () => Promise<Db> | null;
  now?: () => number;
  timers?: TimerApi;
  intervalMs?: number;
  firstDelayMs?: number;
  /** This process's name in the lease (default processHolder()). */
  holder?: string;
  log?: (message: string, err?: unknown) => void;
}

export type HousekeepingSchedule = LeasedJobSchedule<HousekeepingResult>;

/** Schedules housekeeping: a first pass after `firstDelayMs`, then one every `intervalMs`. */
export function scheduleHousekeeping(options: HousekeepingOptions): HousekeepingSchedule {
  const now = options.now ?? Date.now;
  const intervalMs = options.intervalMs ?? HOUSEKEEPING.intervalMs;
  return scheduleLeasedJob({
    db: options.db,
    run: (db) => runHousekeeping(db, now(), intervalMs, options.holder),
    intervalMs,
    firstDelayMs: options.firstDelayMs ?? HOUSEKEEPING.firstDelayMs,
    timers: options.timers,
    log: options.log ?? ((m: string, err?: unknown) => console.error(`[baton] housekeeping: ${m}`, err ?? "")),
    failure: "a pass failed (the next one will try again)",
  });
}

const holder = globalThis as typeof globalThis & { __batonHousekeeping?: HousekeepingSchedule };

/** Starts this process's housekeeping once (later calls return the running schedule). */
export function startHousekeeping(options: HousekeepingOptions): HousekeepingSchedule {
  holder.__batonHousekeeping ??= scheduleHousekeeping(options);
  // The audit log's SIEM stream: sent by whichever process holds its lease (lib/server/audit/stream.ts).
  startAuditStream(options.db);
  // Baton's usage record: each team's counters, read at most once per BATON_USAGE_INTERVAL_MS.
  startUsageReader({ db: options.db, ...(options.log ? { log: options.log } : {}) });
  return holder.__batonHousekeeping;
}

/** Stops this process's housekeeping (tests, shutdown); the next startHousekeeping() starts anew. */
export function stopHousekeeping(): void {
  holder.__batonHousekeeping?.stop();
  holder.__batonHousekeeping = undefined;
  stopAuditStream();
  stopUsageReader();
}
