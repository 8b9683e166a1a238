import "server-only";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateToLatest } from "../db/index";
import { testBackends, type TestDatabase } from "../db/test-backends";
import { bookReading, type Reading } from "./record";

const DAY = Date.UTC(2031, 4, 10, 12);

describe.each(testBackends)("usage booking on $name", (backend) => {
  let t: TestDatabase;
  let seq = 0;
  const teamId = "team_usage_book";
  const fresh = () => `sbx_${++seq}`;
  const reading = (sandboxId: string, cpu: number, gib: number, at: number, extra: Partial<Reading> = {}): Reading => ({
    teamId,
    sandboxId,
    cpuSeconds: cpu,
    gibSeconds: gib,
    at,
    userId: "u1",
    template: "base",
    status: "running",
    ...extra,
  });
  const daily = (sandboxId: string) =>
    t.db
      .selectFrom("usage_daily")
      .select(["date", "cpu_ms", "gib_ms"])
      .where("sandbox_id", "=", sandboxId)
      .orderBy("date")
      .execute()
      .then((rows) => rows.map((r) => ({ date: r.date, cpu_ms: Number(r.cpu_ms), gib_ms: Number(r.gib_ms) })));

  beforeAll(async () => {
    t = await backend.open();
    await migrateToLatest(t.db);
    await t.db
      .insertInto("teams")
      .values({ id: teamId, name: "T", slug: "t-usage", created_at: 0, spend_cap_eur: null })
      .execute();
  });
  afterAll(async () => t.close());

  it("books the growth between readings on the UTC day of the later one", async () => {
    const id = fresh();
    expect(await bookReading(t.db, reading(id, 1.5, 0.25, DAY))).toEqual({
      cpuMs: 1500,
      gibMs: 250,
      date: "2031-05-10",
    });
    expect(await bookReading(t.db, reading(id, 4, 1, DAY + 60_000))).toMatchObject({ cpuMs: 2500, gibMs: 750 });
    // Past midnight UTC: the next day.
    await bookReading(t.db, reading(id, 5, 1.5, Date.UTC(2031, 4, 11, 0, 0, 1)));
    expect(await daily(id)).toEqual([
      { date: "2031-05-10", cpu_ms: 4000, gib_ms: 1000 },
      { date: "2031-05-11", cpu_ms: 1000, gib_ms: 500 },
    ]);
  });

  it("a reading with no new usage, a replay and an older reading book nothing", async () => {
    const id = fresh();
    await bookReading(t.db, reading(id, 10, 2, DAY));
    expect(await bookReading(t.db, reading(id, 10, 2, DAY + 60_000))).toMatchObject({ cpuMs: 0, gibMs: 0 });
    expect(await bookReading(t.db, reading(id, 10, 2, DAY + 60_000))).toMatchObject({ cpuMs: 0, gibMs: 0 });
    expect(await bookReading(t.db, reading(id, 8, 1, DAY + 30_000))).toMatchObject({ cpuMs: 0, gibMs: 0 });
    expect(await daily(id)).toEqual([{ date: "2031-05-10", cpu_ms: 10_000, gib_ms: 2000 }]);
  });

  it("counters that went backwards (a new upstream) never book a negative amount", async () => {
    const id = fresh();
    await bookReading(t.db, reading(id, 10, 2, DAY));
    expect(await bookReading(t.db, reading(id, 3, 1, DAY + 60_000))).toMatchObject({ cpuMs: 0, gibMs: 0 });
    // From the new baseline on, growth books again.
    expect(await bookReading(t.db, reading(id, 5, 1.5, DAY + 120_000))).toMatchObject({ cpuMs: 2000, gibMs: 500 });
    expect(await daily(id)).toEqual([{ date: "2031-05-10", cpu_ms: 12_000, gib_ms: 2500 }]);
  });

  it("two writers racing with the same and with different readings book each second once", async () => {
    const id = fresh();
    await bookReading(t.db, reading(id, 1, 1, DAY));
    const racers = [
      reading(id, 6, 2, DAY + 60_000),
      reading(id, 6, 2, DAY + 60_000),
      reading(id, 9, 3, DAY + 61_000, { final: true, status: "terminated" }),
      reading(id, 6, 2, DAY + 60_000),
    ];
    await Promise.all(racers.map((r) => bookReading(t.db, r)));
    const [row] = await daily(id);
    // Whatever the order, the booked total is the newest reading's lifetime, or the older one's
    // when it came last (then the newest arrived first and the older one is a stale, unbooked reading).
    expect(row!.cpu_ms).toBe(9000);
    expect(row!.gib_ms).toBe(3000);
    const meter = await t.db
      .selectFrom("usage_meters")
      .selectAll()
      .where("sandbox_id", "=", id)
      .executeTakeFirstOrThrow();
    expect(Number(meter.final_at)).toBe(DAY + 61_000);
    expect(meter.status).toBe("terminated");
  });

  it("deleting the team deletes its record", async () => {
    const other = "team_usage_gone";
    await t.db
      .insertInto("teams")
      .values({ id: other, name: "G", slug: "g-usage", created_at: 0, spend_cap_eur: null })
      .execute();
    await bookReading(t.db, { ...reading("sbx_gone", 1, 1, DAY), teamId: other });
    await t.db.deleteFrom("teams").where("id", "=", other).execute();
    expect(await t.db.selectFrom("usage_daily").select("sandbox_id").where("team_id", "=", other).execute()).toEqual(
      [],
    );
    expect(await t.db.selectFrom("usage_meters").select("sandbox_id").where("team_id", "=", other).execute()).toEqual(
      [],
    );
  });
});

describe.each(testBackends)("window spending on $name", (backend) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await backend.open();
    await migrateToLatest(t.db);
    await t.db
      .insertInto("teams")
      .values({ id: "team_spend", name: "S", slug: "s", created_at: 0, spend_cap_eur: null })
      .execute();
  });
  afterAll(async () => t.close());

  it("sums whole micro-euros per (sandbox, day) for the team and each creator, within [start, end)", async () => {
    const { windowSpend } = await import("./spend");
    const book = (sandboxId: string, userId: string | null, cpu: number, at: number) =>
      bookReading(t.db, {
        teamId: "team_spend",
        sandboxId,
        cpuSeconds: cpu,
        gibSeconds: 0,
        at,
        userId,
        template: null,
        status: "running",
      });
    // 3600 CPU-seconds = one vCPU-hour = 45,000 µ€ at the seed's rate.
    await book("sbx_a", "usr_1", 3600, Date.UTC(2031, 0, 31, 23));
    await book("sbx_a", "usr_1", 7200, Date.UTC(2031, 1, 1, 1));
    await book("sbx_b", null, 1800, Date.UTC(2031, 1, 2));
    const feb = await windowSpend(t.db, "team_spend", { start: Date.UTC(2031, 1, 1), end: Date.UTC(2031, 2, 1) });
    expect(feb.team).toBe(45_000 + 22_500);
    expect([...feb.byUser]).toEqual([["usr_1", 45_000]]);
    const jan31 = await windowSpend(t.db, "team_spend", { start: Date.UTC(2031, 0, 31), end: Date.UTC(2031, 1, 1) });
    expect(jan31.team).toBe(45_000);
  });
});
