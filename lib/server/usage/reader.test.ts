import "server-only";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrkestrClient } from "../../orkestr/core";
import { migrateToLatest } from "../db/index";
import { testBackends, type TestDatabase } from "../db/test-backends";
import { FORMER_MEMBER, buildUsageReport } from "./report";
import { listAuditEvents } from "../db/audit";
import { upsertConnection } from "../db/connections";
import { alertText } from "./cap-alerts";
import { setCap } from "./caps-store";
import { runTeamCaps } from "./caps-run";
import {
  rankConnections,
  readUsageOnce,
  runUsageReader,
  teamClient,
  usageIntervalMs,
  type TeamClientFor,
} from "./reader";

// The reading job against a loopback upstream that answers like the engine (a real HTTP server):
// live sandboxes are read and booked for their creator, a terminated one gets its final reading, a
// gone one (404) is closed, another team's stamped sandbox is left alone, and of two instances only
// one runs per interval. The report's run-rate and forecast come from the last two readings.

interface FakeSandbox {
  status: string;
  cpu: number;
  gib: number;
  metadata: Record<string, string>;
  listed: boolean;
}

function upstream(sandboxes: Map<string, FakeSandbox>) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === "/v1/sandboxes") {
      const wanted = (url.searchParams.get("status") ?? "").split(",");
      const items = [...sandboxes]
        .filter(([, s]) => s.listed && wanted.includes(s.status))
        .map(([id, s]) => ({ id, status: s.status, template: "python-3.12", metadata: s.metadata }));
      return send(200, { items, next_cursor: null });
    }
    const m = /^\/v1\/sandboxes\/([^/]+)\/metrics$/.exec(url.pathname);
    const s = m ? sandboxes.get(m[1]!) : undefined;
    if (!m || !s) return send(404, { code: "sandbox_not_found", detail: "not found" });
    send(200, { sandbox_id: m[1], sandbox_status: s.status, lifetime: { cpu_seconds: s.cpu, gb_seconds: s.gib } });
  });
  return server;
}

describe.each(testBackends)("the usage reader on $name", (backend) => {
  let t: TestDatabase;
  let server: http.Server;
  const sandboxes = new Map<string, FakeSandbox>();
  const teamId = "team_reader";
  let clientFor: TeamClientFor;

  beforeAll(async () => {
    t = await backend.open();
    await migrateToLatest(t.db);
    await t.db
      .insertInto("teams")
      .values({ id: teamId, name: "R", slug: "r", created_at: 0, spend_cap_eur: null })
      .execute();
    await t.db
      .insertInto("users")
      .values({
        id: "usr_a",
        email: "a@example.com",
        email_normalized: "a@example.com",
        name: "Ada",
        password_hash: null,
        created_at: 0,
        updated_at: 0,
        disabled_at: null,
      })
      .execute();
    await t.db
      .insertInto("memberships")
      .values({ team_id: teamId, user_id: "usr_a", role: "owner", created_at: 0 })
      .execute();
    server = upstream(sandboxes);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = createOrkestrClient({ baseUrl: origin, token: "ork_test_token", maxRetries: 0 });
    clientFor = async (_db, id) =>
      id === teamId ? { client, pauser: client, pauserUserId: "usr_a", noPauser: null } : null;
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await t.close();
  });

  const meter = (id: string) =>
    t.db.selectFrom("usage_meters").selectAll().where("sandbox_id", "=", id).executeTakeFirst();

  it("reads live sandboxes, books final readings, closes gone ones, leaves other teams' alone", async () => {
    const T0 = Date.UTC(2031, 6, 1, 10);
    sandboxes.set("sbx_live", {
      status: "running",
      cpu: 36,
      gib: 18,
      metadata: { "baton.user": "usr_a", "baton.team": teamId },
      listed: true,
    });
    sandboxes.set("sbx_gone", {
      status: "running",
      cpu: 1,
      gib: 1,
      metadata: { "baton.user": "usr_left" },
      listed: true,
    });
    sandboxes.set("sbx_ends", { status: "paused", cpu: 2, gib: 2, metadata: {}, listed: true });
    sandboxes.set("sbx_other", {
      status: "running",
      cpu: 99,
      gib: 99,
      metadata: { "baton.team": "team_else" },
      listed: true,
    });

    const [first] = await readUsageOnce(t.db, { now: T0, clientFor });
    expect(first).toMatchObject({ teamId, read: 3, finished: 0, error: null });
    expect(await meter("sbx_other")).toBeUndefined();
    expect(await meter("sbx_live")).toMatchObject({ user_id: "usr_a", template: "python-3.12", status: "running" });
    expect((await meter("sbx_ends"))!.user_id).toBeNull(); // outside Baton

    // An hour later: sbx_live spent 36 CPU-seconds and 18 GiB-seconds more; sbx_ends was terminated
    // (no longer listed, its lifetime still answered); sbx_gone is past retention (404).
    sandboxes.get("sbx_live")!.cpu = 72;
    sandboxes.get("sbx_live")!.gib = 36;
    Object.assign(sandboxes.get("sbx_ends")!, { status: "terminated", cpu: 3, listed: false });
    sandboxes.delete("sbx_gone");
    const [second] = await readUsageOnce(t.db, { now: T0 + 3_600_000, clientFor });
    expect(second).toMatchObject({ read: 3, finished: 2, error: null });
    expect(Number((await meter("sbx_ends"))!.final_at)).toBe(T0 + 3_600_000);
    expect((await meter("sbx_ends"))!.status).toBe("terminated");
    expect(Number((await meter("sbx_gone"))!.final_at)).toBe(T0 + 3_600_000);

    // A third run reads only the live one: finished meters are not read again.
    const [third] = await readUsageOnce(t.db, { now: T0 + 3_600_000 + 60_000, clientFor });
    expect(third!.read).toBe(1);

    // The report: 72 CPU-s × 45,000 µ€/h + 36 GiB-s × 15,000 µ€/h = 900 + 150 = 1050 µ€ for sbx_live.
    const report = await buildUsageReport(t.db, {
      teamId,
      userId: "usr_a",
      scope: "team",
      from: "2031-07-01",
      to: "2031-07-01",
      now: T0 + 3_600_000 + 60_000,
      storage: { volumes_gb: 12.5, snapshots_gb: 0.5, templates_gb: 0 },
    });
    expect(report.sandboxes.find((s) => s.id === "sbx_live")).toMatchObject({ cost_micro: 1050, cpu_seconds: 72 });
    expect(report.totals.sandboxes).toBe(3);
    expect(report.members.find((m) => m.user_id === "usr_left")).toMatchObject({ name: FORMER_MEMBER, email: null });
    expect(report.members.find((m) => m.user_id === "usr_a")).toMatchObject({ name: "Ada", email: "a@example.com" });
    expect(report.members.find((m) => m.user_id === null)).toMatchObject({ name: null, sandboxes: 1 });
    // Storage: 13 GB − 10 GB free = 3 GB billable × 100,000 µ€.
    expect(report.storage).toMatchObject({ billable_gb: 3, free_gb: 10, month_cost_micro: 300_000 });
    // The run-rate: between the last two readings of sbx_live (no growth in the last minute) → 0.
    expect(report.month.run_rate_micro_per_hour).toBe(0);

    // Growth in the next minute: 0.6 CPU-s and 0.3 GiB-s per minute = 36 CPU-s/h and 18 GiB-s/h → 525 µ€/h.
    sandboxes.get("sbx_live")!.cpu = 72.6;
    sandboxes.get("sbx_live")!.gib = 36.3;
    const at = T0 + 3_600_000 + 120_000;
    await readUsageOnce(t.db, { now: at, clientFor });
    const live = await buildUsageReport(t.db, {
      teamId,
      userId: "usr_a",
      scope: "team",
      from: "2031-07-01",
      to: "2031-07-01",
      now: at,
      storage: null,
    });
    expect(live.month.running).toEqual([
      { id: "sbx_live", user_id: "usr_a", template: "python-3.12", micro_per_hour: 525 },
    ]);
    expect(live.month.run_rate_micro_per_hour).toBe(525);
    const hoursLeft = (Date.UTC(2031, 7, 1) - at) / 3_600_000;
    expect(live.month.forecast_micro).toBe(live.month.so_far_micro + Math.round(525 * hoursLeft));
    expect(live.month.ends_at).toBe("2031-08-01T00:00:00.000Z");
    expect(live.storage).toBeNull();
    expect(live.last_reading_at).toBe(new Date(at).toISOString());
  });

  it("of two instances, one runs per interval (the lease)", async () => {
    const now = Date.UTC(2031, 6, 2);
    const [a, b] = await Promise.all([
      runUsageReader(t.db, 60_000, "instance-a", now, { clientFor }),
      runUsageReader(t.db, 60_000, "instance-b", now, { clientFor }),
    ]);
    expect([a, b].filter((r) => r !== null)).toHaveLength(1);
    expect(await runUsageReader(t.db, 60_000, "instance-a", now + 59_999, { clientFor })).toBeNull();
    expect(await runUsageReader(t.db, 60_000, "instance-b", now + 60_000, { clientFor })).not.toBeNull();
  });

  it("pauses through a connection of a member whose role may pause; with only viewers', the pause fails, audited with why", async () => {
    const team = "team_conn";
    await t.db
      .insertInto("teams")
      .values({ id: team, name: "C", slug: "c", created_at: 0, spend_cap_eur: null })
      .execute();
    const person = async (id: string, role: string) => {
      await t.db
        .insertInto("users")
        .values({
          id,
          email: `${id}@example.com`,
          email_normalized: `${id}@example.com`,
          name: id,
          password_hash: null,
          created_at: 0,
          updated_at: 0,
          disabled_at: null,
        })
        .execute();
      await t.db.insertInto("memberships").values({ team_id: team, user_id: id, role, created_at: 0 }).execute();
    };
    const connect = (userId: string, now: number) =>
      upsertConnection(t.db, {
        userId,
        teamId: team,
        name: "Hosted",
        baseUrl: "https://api.orkestr.example",
        token: `ork_${userId}_token_0123456789`,
        now,
      });
    // The viewer's connection is the newest and healthy: the reader reads through it, but it may not pause.
    await person("usr_viewer", "viewer");
    const viewers = await connect("usr_viewer", 3_000);
    const only = await teamClient(t.db, team);
    expect(only).toMatchObject({ pauser: null, pauserUserId: null });
    expect(only!.client).toBeTruthy();
    expect(only!.noPauser).toMatch(/No member whose role may pause sandboxes .* only viewers' connections/);

    // A member's connection, older and last checked with an error, is still the one that pauses.
    await person("usr_member", "member");
    const members = await connect("usr_member", 1_000);
    await t.db.updateTable("orkestr_connections").set({ last_error: "timeout" }).where("id", "=", members.id).execute();
    await person("usr_gone", "admin");
    await connect("usr_gone", 5_000);
    await t.db.updateTable("memberships").set({ disabled_at: 1 }).where("user_id", "=", "usr_gone").execute();
    expect(await teamClient(t.db, team)).toMatchObject({ pauserUserId: "usr_member", noPauser: null });

    // The order, pure: healthy before failing, newer before older; pausing only by roles that may.
    const ranked = rankConnections([
      { id: "c1", userId: "usr_viewer", role: "viewer", lastError: null, updatedAt: 3 },
      { id: "c2", userId: "usr_member", role: "member", lastError: "timeout", updatedAt: 1 },
      { id: "c3", userId: "usr_owner", role: "owner", lastError: null, updatedAt: 2 },
      { id: "c4", userId: "usr_odd", role: "auditor", lastError: null, updatedAt: 9 },
    ]);
    expect(ranked.read.map((c) => c.id)).toEqual(["c4", "c1", "c3", "c2"]);
    expect(ranked.pause.map((c) => c.id)).toEqual(["c3", "c2"]);

    // The caps job with only the viewer's connection: a reached pause cap fails to pause, and says why.
    const now = Date.UTC(2031, 6, 3, 12);
    await t.db.deleteFrom("orkestr_connections").where("id", "=", members.id).execute();
    await setCap(t.db, {
      teamId: team,
      userId: null,
      window: "day",
      limitMicro: 0,
      action: "pause",
      by: "usr_viewer",
      now,
    });
    const viewerOnly = await teamClient(t.db, team);
    const [decision] = await runTeamCaps(t.db, team, viewerOnly!, now);
    expect(decision).toMatchObject({ reached: true, paused: [], pauseFailed: [{ id: "*" }] });
    const failed = (await listAuditEvents(t.db, { teamId: team })).find((e) => e.action === "spend_cap.pause_failed");
    expect(failed).toMatchObject({ result: "no_pause_connection" });
    expect(JSON.stringify(failed!.data)).toContain("only viewers' connections");
    // The alert says Baton could not pause, not that the orkestr API refused.
    const text = alertText(
      "C",
      {
        teamId: team,
        cap: { id: "cap", teamId: team, userId: null, window: "day", limitMicro: 0, action: "pause" },
        kind: "pause_failed",
        threshold: null,
        spentMicro: 0,
        windowKey: "2031-07-03",
        failed: decision!.pauseFailed,
        cause: "no_pause_connection",
      },
      null,
    );
    expect(text).toMatch(/^C: the team's daily spend cap of €0\.00 is reached, but Baton could not pause/);
    expect(text).toContain("only viewers' connections");
    expect(text).not.toContain("orkestr API refused");
    void viewers;
  });

  it("the interval: BATON_USAGE_INTERVAL_MS, one minute by default, at least one second", () => {
    expect(usageIntervalMs({})).toBe(60_000);
    expect(usageIntervalMs({ BATON_USAGE_INTERVAL_MS: "2500" })).toBe(2500);
    expect(usageIntervalMs({ BATON_USAGE_INTERVAL_MS: "10" })).toBe(1000);
    expect(usageIntervalMs({ BATON_USAGE_INTERVAL_MS: "soon" })).toBe(60_000);
  });
});
