import "server-only";
import { sql } from "kysely";
import type { Db } from "./index";

// Fixed-window rate limiting over the login_attempts table, e.g. keys "signin:ip:1.2.3.4" and
// "signin:email:a@b.c". One atomic upsert per hit, so concurrent requests (and several console
// processes on one Postgres) count correctly.

export interface RateLimitResult {
  allowed: boolean;
  count: number;
  remaining: number;
  /** Milliseconds until the window resets (0 when allowed). */
  retryAfterMs: number;
}

export async function hitRateLimit(
  db: Db,
  key: string,
  opts: { limit: number; windowMs: number; now?: number },
): Promise<RateLimitResult> {
  const now = opts.now ?? Date.now();
  const expired = now - opts.windowMs;
  const row = await db
    .insertInto("login_attempts")
    .values({ key, window_start: now, count: 1 })
    .onConflict((oc) =>
      oc.column("key").doUpdateSet({
        count: sql<number>`case when login_attempts.window_start <= ${expired} then 1 else login_attempts.count + 1 end`,
        window_start: sql<number>`case when login_attempts.window_start <= ${expired} then ${now} else login_attempts.window_start end`,
      }),
    )
    .returning(["count", "window_start"])
    .executeTakeFirstOrThrow();
  const count = Number(row.count);
  const allowed = count <= opts.limit;
  return {
    allowed,
    count,
    remaining: Math.max(opts.limit - count, 0),
    retryAfterMs: allowed ? 0 : Math.max(Number(row.window_start) + opts.windowMs - now, 0),
  };
}

/**
 * Takes one hit back (never below zero), e.g. for an attempt that turned out to succeed: counting
 * every attempt up front keeps concurrent attempts capped, and refunding the good ones leaves a
 * counter of failures.
 */
export async function refundRateLimit(db: Db, key: string): Promise<void> {
  await db
    .updateTable("login_attempts")
    .set({ count: sql<number>`case when count > 0 then count - 1 else 0 end` })
    .where("key", "=", key)
    .execute();
}

/** Forgets a key (e.g. after a successful sign-in). */
export async function resetRateLimit(db: Db, key: string): Promise<void> {
  await db.deleteFrom("login_attempts").where("key", "=", key).execute();
}

/** Housekeeping: deletes windows older than `olderThanMs`. */
export async function purgeRateLimits(db: Db, olderThanMs: number, now = Date.now()): Promise<number> {
  const res = await db
    .deleteFrom("login_attempts")
    .where("window_start", "<", now - olderThanMs)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}
