import "server-only";
import { sql } from "kysely";
import type { Db } from "../db/index";
import { isPostgres } from "../db/util";

// One team's spend-cap decisions, one at a time: the caps job's evaluation of a team and a request's
// check-then-create for that team take turns. So a create that passed the check is not still on its
// way upstream while the job writes that the cap is reached, and parallel creates are checked one
// after the other (each against the state the previous one left).
// - In this process: a queue per team (below). On SQLite that is all there is (one process owns the
//   file, one Baton instance).
// - On PostgreSQL, several Baton instances share the database, so the holder of the queue's turn
//   also takes a transaction-scoped advisory lock on the team (pg_advisory_xact_lock), held across
//   the check and the upstream create (or the job's evaluation) and released when that transaction
//   ends, commit, rollback or a dropped connection alike: a crashed instance cannot leave it held.
//   The in-process queue comes first so that parallel creates in one process wait in memory, not
//   each holding a pooled connection while they wait for the database's lock.
// The lock's transaction does nothing but hold the lock: writes made under it go through the
// caller's own handle and commit as they happen (an alert claimed stays claimed if a later step
// fails). Reads that must see the previous holder's writes run after the lock is taken, so they see
// what it committed (READ COMMITTED).

/** The advisory locks' first key: Baton's spend caps (the second is the team id's hash). */
export const CAP_LOCK_CLASS = 0x0ba7_0c05;

const tails = new Map<string, Promise<unknown>>();

async function inProcess<T>(teamId: string, fn: () => Promise<T>): Promise<T> {
  const before = tails.get(teamId) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((r) => (release = r));
  const tail = before.then(() => mine);
  tails.set(teamId, tail);
  try {
    await before.catch(() => undefined);
    return await fn();
  } finally {
    release();
    if (tails.get(teamId) === tail) tails.delete(teamId);
  }
}

/**
 * Runs `fn` holding the team's cap lock. `fn` gets the handle to read with under the lock: on
 * PostgreSQL the lock's own transaction (so a create's check needs no second pooled connection
 * while it holds one), on SQLite `db` itself.
 */
export async function withTeamCapLock<T>(db: Db, teamId: string, fn: (locked: Db) => Promise<T>): Promise<T> {
  return inProcess(teamId, () => {
    if (!isPostgres(db)) return fn(db);
    const locked = async (trx: Db) => {
      await sql`select pg_advisory_xact_lock(${CAP_LOCK_CLASS}::int4, hashtext(${teamId}))`.execute(trx);
      return fn(trx);
    };
    // Inside a caller's transaction the lock joins it (and lasts as long as it does).
    return db.isTransaction ? locked(db) : db.transaction().execute(locked);
  });
}
