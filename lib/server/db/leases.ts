import "server-only";
import { randomBytes } from "node:crypto";
import os from "node:os";
import { sql } from "kysely";
import type { Db } from "./index";

// Leases: how several Baton processes on one database agree that a background job runs in only
// one of them. A lease is a row (name, holder, expires_at); a process holds it while expires_at is
// in the future. Taking it is one conditional upsert: insert the row, or overwrite it only when it
// has expired (or, when renewing, is already ours). The database serialises concurrent upserts on
// one key, so of several processes racing for a free lease exactly one gets a row back.
//
// Times are the callers' epoch milliseconds, so the processes' clocks must agree to well within a
// lease's length (NTP does: leases here last minutes to an hour).

export interface LeaseRequest {
  /** The job, e.g. "housekeeping". */
  name: string;
  /** Who asks: processHolder() unless a test plays several processes. */
  holder: string;
  /** How long the lease lasts from `now` once taken. */
  ttlMs: number;
  now?: number;
  /**
   * Whether a holder whose lease has not expired yet may extend it (a leader that keeps a job for
   * itself). False for "at most once per period" jobs: then nobody, the holder included, takes the
   * lease again before it expires.
   */
  renew?: boolean;
}

export interface Lease {
  name: string;
  holder: string;
  acquiredAt: number;
  expiresAt: number;
}

/** Takes (or renews) the lease; true when `holder` holds it until `now + ttlMs`, false when another process does. */
export async function acquireLease(db: Db, request: LeaseRequest): Promise<boolean> {
  const now = request.now ?? Date.now();
  const expiresAt = now + request.ttlMs;
  const row = await db
    .insertInto("leases")
    .values({ name: request.name, holder: request.holder, acquired_at: now, expires_at: expiresAt })
    .onConflict((oc) =>
      oc
        .column("name")
        .doUpdateSet({
          holder: request.holder,
          // A renewal keeps the time the holder first took it.
          acquired_at: sql<number>`case when leases.holder = ${request.holder} and leases.expires_at > ${now} then leases.acquired_at else ${now} end`,
          expires_at: expiresAt,
        })
        .where((eb) =>
          request.renew
            ? eb.or([eb("leases.expires_at", "<=", now), eb("leases.holder", "=", request.holder)])
            : eb("leases.expires_at", "<=", now),
        ),
    )
    .returning("name")
    .executeTakeFirst();
  return row !== undefined;
}

/** Gives the lease up early (shutdown), so another process can take it at once; false when `holder` did not hold it. */
export async function releaseLease(db: Db, name: string, holder: string, now = Date.now()): Promise<boolean> {
  const res = await db
    .updateTable("leases")
    .set({ expires_at: now })
    .where("name", "=", name)
    .where("holder", "=", holder)
    .where("expires_at", ">", now)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** The lease as stored (expired or not), or null when it was never taken: for logs and tests. */
export async function readLease(db: Db, name: string): Promise<Lease | null> {
  const row = await db.selectFrom("leases").selectAll().where("name", "=", name).executeTakeFirst();
  if (!row) return null;
  return {
    name: row.name,
    holder: row.holder,
    acquiredAt: Number(row.acquired_at),
    expiresAt: Number(row.expires_at),
  };
}

const holderKey = globalThis as typeof globalThis & { __batonLeaseHolder?: string };

/**
 * This process's name as a lease holder: host, pid and a random suffix (a pid is reused after a
 * restart, and two containers may share a host name and a pid).
 */
export function processHolder(): string {
  holderKey.__batonLeaseHolder ??= `${os.hostname()}/${process.pid}/${randomBytes(4).toString("hex")}`;
  return holderKey.__batonLeaseHolder;
}
