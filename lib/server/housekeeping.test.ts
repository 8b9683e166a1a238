import "server-only";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { closeDb, getMigratedDb, migrateToLatest, type Db } from "./db/index";
import { readLease } from "./db/leases";
import { hitRateLimit } from "./db/rate-limit";
import { createSession } from "./db/sessions";
import { testBackends, type TestDatabase } from "./db/test-backends";
import { createUser } from "./db/users";
import { resetEnvForTests } from "./env";
import { HOUSEKEEPING, scheduleHousekeeping, stopHousekeeping, type TimerApi } from "./housekeeping";

const DAY = 24 * 60 * 60_000;

/** Timers that fire only when the test says so: `advance(ms)` runs what falls due, in order. */
function fakeTimers(): TimerApi & { advance(ms: number): Promise<void> } {
  let clock = 0;
  let seq = 0;
  const due = new Map<number, { at: number; fn: () => void; every: number | null }>();
  return {
    setTimeout: (fn, ms) => {
      due.set(++seq, { at: clock + ms, fn, every: null });
      return { id: seq } as never;
    },
    setInterval: (fn, ms) => {
      due.set(++seq, { at: clock + ms, fn, every: ms });
      return { id: seq } as never;
    },
    clearTimeout: (h) => void due.delete((h as { id: number }).id),
    clearInterval: (h) => void due.delete((h as { id: number }).id),
    async advance(ms) {
      const until = clock + ms;
      for (;;) {
        const next = [...due.entries()].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
        if (!next) break;
        const [id, t] = next;
        clock = t.at;
        if (t.every === null) due.delete(id);
        else t.at += t.every;
        t.fn();
      }
      clock = until;
    },
  };
}

/** Expired, revoked-long-ago and live sessions, and old and fresh rate-limit windows, at `now`. */
async function seed(db: Db, now: number) {
  const user = await createUser(db, {
    email: `hk-${now}-${Math.random().toString(36).slice(2)}@example.com`,
    passwordHash: null,
  });
  const expired = await createSession(db, { userId: user.id, now: now - 40 * DAY, ttlMs: 30 * DAY }); // expired 10 days ago
  const recent = await createSession(db, { userId: user.id, now: now - 31 * DAY, ttlMs: 30 * DAY }); // expired yesterday: kept a week
  const live = await createSession(db, { userId: user.id, now });
  await db
    .updateTable("sessions")
    .set({ revoked_at: now - 8 * DAY })
    .where("id", "=", recent.session.id)
    .execute();
  await hitRateLimit(db, `hk:old:${now}`, { limit: 10, windowMs: 15 * 60_000, now: now - 2 * 60 * 60_000 });
  await hitRateLimit(db, `hk:fresh:${now}`, { limit: 10, windowMs: 15 * 60_000, now });
  const sessionIds = async () =>
    (await db.selectFrom("sessions").select("id").where("user_id", "=", user.id).execute()).map((r) => r.id).sort();
  const windows = async () =>
    (await db.selectFrom("login_attempts").select("key").where("key", "like", `hk:%:${now}`).execute())
      .map((r) => r.key)
      .sort();
  return {
    expired: expired.session.id,
    revoked: recent.session.id,
    live: live.session.id,
    fresh: `hk:fresh:${now}`,
    sessionIds,
    windows,
  };
}

describe.each(testBackends)("scheduled housekeeping on $name", (backend) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await backend.open();
    await migrateToLatest(t.db);
  });
  afterAll(async () => t.close());

  it("the scheduled pass deletes ended sessions and closed rate-limit windows, and keeps the rest", async () => {
    const now = Date.UTC(2030, 0, 1);
    const rows = await seed(t.db, now);
    const timers = fakeTimers();
    const schedule = scheduleHousekeeping({
      db: async () => t.db,
      now: () => now,
      timers,
      intervalMs: HOUSEKEEPING.intervalMs,
    });
    expect(await rows.sessionIds()).toHaveLength(3);

    await timers.advance(HOUSEKEEPING.firstDelayMs - 1);
    expect(await rows.sessionIds()).toHaveLength(3); // not yet
    await timers.advance(1);
    await vi.waitFor(async () => expect(await rows.sessionIds()).toEqual([rows.live]));
    expect(await rows.windows()).toEqual([rows.fresh]);
    schedule.stop();
  });

  it("one pass per period across processes sharing the database: the claim is atomic and idempotent", async () => {
    const now = Date.UTC(2030, 5, 1);
    let clock = now;
    const a = scheduleHousekeeping({ db: async () => t.db, now: () => clock, timers: fakeTimers(), holder: "a" });
    const b = scheduleHousekeeping({ db: async () => t.db, now: () => clock, timers: fakeTimers(), holder: "b" });
    const both = await Promise.all([a.tick(), b.tick()]);
    expect(both.filter((r) => r !== null)).toHaveLength(1); // exactly one of them ran it
    const first = both[0] !== null ? "a" : "b";
    // The lease names who ran the period and when it ends.
    expect(await readLease(t.db, "housekeeping")).toMatchObject({
      holder: first,
      expiresAt: now + HOUSEKEEPING.intervalMs,
    });
    expect(await a.tick()).toBeNull(); // and nobody again within the period, the runner included
    expect(await b.tick()).toBeNull();
    clock += HOUSEKEEPING.intervalMs;
    const rows = await seed(t.db, clock);
    const other = first === "a" ? b : a;
    expect(await other.tick()).toMatchObject({ sessions: expect.any(Number), rateLimits: expect.any(Number) });
    expect(await rows.sessionIds()).toEqual([rows.live]);
    a.stop();
    b.stop();
  });
});

describe("the console process schedules it (SQLite)", () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-housekeeping-"));
    vi.stubEnv("BATON_DATA_DIR", dataDir);
    vi.stubEnv("BATON_SECRET", "h".repeat(48));
    vi.stubEnv("DATABASE_URL", "");
    resetEnvForTests();
  });
  afterEach(() => vi.useRealTimers());
  afterAll(async () => {
    stopHousekeeping();
    await closeDb();
    vi.unstubAllEnvs();
    resetEnvForTests();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("getMigratedDb() starts it: expired rows are gone once the first pass has come round", async () => {
    stopHousekeeping();
    // Only the timers are fake: the database and the clock are real.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
    const db = await getMigratedDb();
    const rows = await seed(db, Date.now());
    await vi.advanceTimersByTimeAsync(HOUSEKEEPING.firstDelayMs);
    vi.useRealTimers();
    await vi.waitFor(async () => expect(await rows.sessionIds()).toEqual([rows.live]));
    expect(await rows.windows()).toEqual([rows.fresh]);
  });
});
