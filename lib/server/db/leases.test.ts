import "server-only";
import { Migrator } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateToLatest } from "./index";
import { migrationProvider } from "./migrations/index";
import { acquireLease, processHolder, readLease, releaseLease } from "./leases";
import { testBackends, type TestDatabase } from "./test-backends";

const MIN = 60_000;

describe.each(testBackends)("leases on $name", (backend) => {
  let t: TestDatabase;
  let seq = 0;
  /** A lease name no other test uses (the database is shared by the file's tests). */
  const fresh = () => `job-${++seq}`;

  beforeAll(async () => {
    t = await backend.open();
    await migrateToLatest(t.db);
  });
  afterAll(async () => t.close());

  it("a free lease is taken; another holder is refused until it expires, then takes it", async () => {
    const name = fresh();
    const now = Date.UTC(2030, 0, 1);
    expect(await acquireLease(t.db, { name, holder: "a", ttlMs: 5 * MIN, now })).toBe(true);
    expect(await acquireLease(t.db, { name, holder: "b", ttlMs: 5 * MIN, now: now + 5 * MIN - 1 })).toBe(false);
    expect(await readLease(t.db, name)).toEqual({ name, holder: "a", acquiredAt: now, expiresAt: now + 5 * MIN });
    // a stopped renewing (it died): once the lease runs out, b has it.
    expect(await acquireLease(t.db, { name, holder: "b", ttlMs: 5 * MIN, now: now + 5 * MIN })).toBe(true);
    expect(await readLease(t.db, name)).toMatchObject({ holder: "b", acquiredAt: now + 5 * MIN });
  });

  it("of many processes racing for a free lease, exactly one gets it", async () => {
    const name = fresh();
    const now = Date.UTC(2030, 1, 1);
    const holders = Array.from({ length: 8 }, (_, i) => `p${i}`);
    const won = await Promise.all(holders.map((holder) => acquireLease(t.db, { name, holder, ttlMs: MIN, now })));
    expect(won.filter(Boolean)).toHaveLength(1);
    const winner = holders[won.indexOf(true)];
    expect((await readLease(t.db, name))?.holder).toBe(winner);
  });

  it("renewal: the holder extends its lease (keeping when it took it); a period claim is not renewed early", async () => {
    const name = fresh();
    const now = Date.UTC(2030, 2, 1);
    expect(await acquireLease(t.db, { name, holder: "a", ttlMs: MIN, now, renew: true })).toBe(true);
    expect(await acquireLease(t.db, { name, holder: "a", ttlMs: MIN, now: now + 30_000, renew: true })).toBe(true);
    expect(await readLease(t.db, name)).toMatchObject({ holder: "a", acquiredAt: now, expiresAt: now + 90_000 });
    // Renewing is the holder's alone.
    expect(await acquireLease(t.db, { name, holder: "b", ttlMs: MIN, now: now + 60_000, renew: true })).toBe(false);
    // Without renew, the holder too waits for the end of the period.
    expect(await acquireLease(t.db, { name, holder: "a", ttlMs: MIN, now: now + 60_000 })).toBe(false);
    expect(await acquireLease(t.db, { name, holder: "a", ttlMs: MIN, now: now + 90_000 })).toBe(true);
    expect(await readLease(t.db, name)).toMatchObject({ acquiredAt: now + 90_000, expiresAt: now + 150_000 });
  });

  it("release: only the holder gives it up, and then another process takes it at once", async () => {
    const name = fresh();
    const now = Date.UTC(2030, 3, 1);
    expect(await acquireLease(t.db, { name, holder: "a", ttlMs: 10 * MIN, now })).toBe(true);
    expect(await releaseLease(t.db, name, "b", now + 1)).toBe(false);
    expect(await acquireLease(t.db, { name, holder: "b", ttlMs: 10 * MIN, now: now + 2 })).toBe(false);
    expect(await releaseLease(t.db, name, "a", now + 3)).toBe(true);
    expect(await releaseLease(t.db, name, "a", now + 4)).toBe(false); // already released
    expect(await acquireLease(t.db, { name, holder: "b", ttlMs: 10 * MIN, now: now + 5 })).toBe(true);
  });

  it("leases of different names are independent; an unknown one reads as null", async () => {
    const [x, y] = [fresh(), fresh()];
    const now = Date.UTC(2030, 4, 1);
    expect(await acquireLease(t.db, { name: x, holder: "a", ttlMs: MIN, now })).toBe(true);
    expect(await acquireLease(t.db, { name: y, holder: "b", ttlMs: MIN, now })).toBe(true);
    expect(await readLease(t.db, fresh())).toBeNull();
  });
});

describe.each(testBackends)("upgrading to leases on $name", (backend) => {
  it("the setting housekeeping used to claim its period in goes; the lease starts free", async () => {
    const t = await backend.open();
    try {
      const migrationTableSchema = backend.name === "postgres" ? t.location : undefined;
      const migrator = new Migrator({ db: t.db, provider: migrationProvider, migrationTableSchema });
      expect((await migrator.migrateTo("0002_engine_token_id")).error).toBeUndefined();
      await t.db.insertInto("settings").values({ key: "housekeeping.last_run", value: "1" }).execute();
      await t.db.insertInto("settings").values({ key: "other", value: "kept" }).execute();
      expect(await migrateToLatest(t.db)).toContain("0003_leases");
      const keys = (await t.db.selectFrom("settings").select("key").execute()).map((r) => r.key);
      expect(keys).toEqual(["other"]);
      expect(await readLease(t.db, "housekeeping")).toBeNull();
    } finally {
      await t.close();
    }
  });
});

describe("processHolder()", () => {
  it("names this process: host, pid and a random part, the same on every call", () => {
    const holder = processHolder();
    expect(holder).toMatch(new RegExp(`/${process.pid}/[0-9a-f]{8}$`));
    expect(processHolder()).toBe(holder);
  });
});
