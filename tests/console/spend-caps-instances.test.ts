import "server-only";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrkestrClient } from "../../lib/orkestr/core";
import { listAuditEvents } from "../../lib/server/db/audit";
import { createDb, migrateToLatest, type Db } from "../../lib/server/db/index";
import { testBackends, type TestDatabase } from "../../lib/server/db/test-backends";
import { setCap } from "../../lib/server/usage/caps-store";
import { scheduleUsageReader, type TeamClientFor, type UsageReaderSchedule } from "../../lib/server/usage/reader";

// Two Baton instances on one PostgreSQL, each with its own connection pool and its own usage/caps
// job on real timers (scheduleUsageReader, as startHousekeeping starts it in every process), against
// a loopback upstream that answers like orkestr. A running sandbox spends on every reading and is
// resumed around Baton after every pause (as a raw token could), so a reached "pause" cap acts on
// every run. The lease lets one instance run per interval: the audit log shows the cap reached once,
// each alert threshold once, and one pause per interval, never two; when the instance that ran
// stops, the other takes over at the next interval. On SQLite (one process's file) there is no
// second instance to have: this runs where TEST_DATABASE_URL is set (bash scripts/postgres.sh).

const postgres = testBackends.find((b) => b.name === "postgres");
const INTERVAL_MS = 1000;
/** CPU-seconds the sandbox spends between two readings: 24 × 45,000 µ€/h ÷ 3600 = 300 µ€ (seed rates). */
const CPU_PER_READ = 24;
const LIMIT_MICRO = 1000;

describe.skipIf(!postgres)("the caps job with two instances on one PostgreSQL", () => {
  let t: TestDatabase;
  let second: Db;
  let server: http.Server;
  let cpu = 0;
  let status = "running";
  const pauses: number[] = [];
  const teamId = "team_two";

  beforeAll(async () => {
    t = await postgres!.open();
    await migrateToLatest(t.db);
    // The second instance's own pool on the same schema.
    second = createDb({ kind: "postgres", url: process.env.TEST_DATABASE_URL!, schema: t.location, max: 5 });
    await t.db
      .insertInto("teams")
      .values({ id: teamId, name: "Two", slug: "two", created_at: 0, spend_cap_eur: null })
      .execute();
    server = http.createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://x");
      const send = (code: number, body: unknown) => {
        res.writeHead(code, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      const sandbox = () => ({ id: "sbx_hot", status, template: "python-3.12", auto_resume: false, metadata: {} });
      req.resume();
      req.on("end", () => {
        if (req.method === "GET" && url.pathname === "/v1/sandboxes") {
          const wanted = (url.searchParams.get("status") ?? "").split(",");
          return send(200, { items: wanted.includes(status) ? [sandbox()] : [], next_cursor: null });
        }
        if (req.method === "GET" && url.pathname === "/v1/sandboxes/sbx_hot/metrics") {
          cpu += CPU_PER_READ;
          return send(200, {
            sandbox_id: "sbx_hot",
            sandbox_status: status,
            lifetime: { cpu_seconds: cpu, gb_seconds: 0 },
          });
        }
        if (req.method === "POST" && url.pathname === "/v1/sandboxes/sbx_hot/pause") {
          pauses.push(Date.now());
          const answer = { ...sandbox(), status: "paused" };
          // Resumed around Baton at once: the next run finds it running again.
          status = "running";
          return send(200, answer);
        }
        if (req.method === "PATCH" && url.pathname === "/v1/sandboxes/sbx_hot") return send(200, sandbox());
        send(404, { code: "not_found", detail: "not found" });
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  });

  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await second?.destroy();
    await t?.close();
  });

  it("one instance acts per interval: the cap reached once, each alert once, one pause per interval", async () => {
    const client = createOrkestrClient({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      token: "ork_test_token",
      maxRetries: 0,
    });
    await setCap(t.db, { teamId, userId: null, window: "day", limitMicro: LIMIT_MICRO, action: "pause", by: "usr_x" });

    // Which instance ran when (the job asks for the team's connection once per run), and how often
    // each one's timer tried (it asks for the database on every tick, run or not).
    const runs: { holder: string; at: number }[] = [];
    const ticks = { a: 0, b: 0 };
    const instance = (holder: "a" | "b", db: Db): UsageReaderSchedule => {
      const clientFor: TeamClientFor = async (_db, id) => {
        runs.push({ holder, at: Date.now() });
        return id === teamId ? { client, pauser: client, pauserUserId: null, noPauser: null } : null;
      };
      return scheduleUsageReader({
        db: () => {
          ticks[holder]++;
          return Promise.resolve(db);
        },
        intervalMs: INTERVAL_MS,
        holder: `instance-${holder}`,
        clientFor,
        log: (m, err) => console.error(`[instance-${holder}] ${m}`, err ?? ""),
      });
    };
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

    const a = instance("a", t.db);
    await sleep(INTERVAL_MS / 2);
    const b = instance("b", second);
    await sleep(6.2 * INTERVAL_MS);
    // The instance that has been running stops (a deploy, a crash): the other takes over.
    a.stop();
    const aStoppedAt = Date.now();
    await sleep(3.2 * INTERVAL_MS);
    b.stop();
    // A run still in flight when its timer stopped finishes (they take milliseconds here).
    await sleep(500);

    // Both timers tried every interval; the lease let one run per interval.
    expect(ticks.a).toBeGreaterThanOrEqual(6);
    expect(ticks.b).toBeGreaterThanOrEqual(8);
    expect(runs.length).toBeGreaterThanOrEqual(8);
    expect(runs.length).toBeLessThan(ticks.a + ticks.b);
    for (let i = 1; i < runs.length; i++)
      expect(runs[i]!.at - runs[i - 1]!.at, `runs ${i - 1} and ${i}`).toBeGreaterThan(INTERVAL_MS * 0.8);
    expect(runs.some((r) => r.holder === "b" && r.at > aStoppedAt)).toBe(true);

    const events = (await listAuditEvents(t.db, { teamId, limit: 500 })).reverse();
    const of = (action: string) => events.filter((e) => e.action === action);
    // Reached once in the window; each threshold alerted once (two instances, not two alerts).
    expect(of("spend_cap.reached")).toHaveLength(1);
    expect(of("spend_cap.alert").map((e) => (e.data as { threshold: number }).threshold)).toEqual([50, 80, 100]);
    const rows = await t.db.selectFrom("spend_cap_alerts").select(["threshold"]).execute();
    expect(rows.map((r) => Number(r.threshold)).sort((x, y) => x - y)).toEqual([50, 80, 100]);
    // One pause per run from the first that saw the cap reached: as many as the upstream received,
    // each in a different interval.
    const paused = of("spend_cap.pause");
    const firstReached = runs.findIndex((_, i) => (i + 1) * CPU_PER_READ * 12.5 >= LIMIT_MICRO);
    expect(paused.length).toBe(runs.length - firstReached);
    expect(pauses.length).toBe(paused.length);
    const times = paused.map((e) => e.createdAt.getTime());
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThan(INTERVAL_MS * 0.8);
    expect(of("spend_cap.pause_failed")).toEqual([]);
  }, 30_000);
});
