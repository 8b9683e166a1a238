import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { costEur } from "../src/plans.js";
import { datesBetween, UsageLedger, type MeterTotals } from "../src/services/usage.js";
import { DEFAULT_ACCOUNT_ID as ACC, openDb, type Db } from "../src/store/db.js";
import { ensureAccount } from "../src/store/tokens.js";
import { createSandbox, exec, startEngine, type EngineHandle } from "./helpers/engine.js";

const DAY = 86_400_000;
const at = (isoTime: string) => Date.parse(isoTime);

describe("the usage ledger (per UTC day)", () => {
  let dir: string;
  let db: Db;
  const live = new Map<string, MeterTotals>();
  let ledger: UsageLedger;

  function sandboxRow(id: string, createdAt: number, started = true, account = ACC): void {
    db.prepare(
      `INSERT INTO sandboxes(id,account_id,status,template,size,cpu,memory_mb,network,region,metadata,env_keys,timeout_seconds,on_timeout,auto_resume,preview_auth,uid,created_at,started_at)
       VALUES (?, ?, 'running', 'python-3.12', 'small', 1, 1024, 'off', 'fsn1', '{}', '[]', 300, 'kill', 0, 0, 1, ?, ?)`,
    ).run(id, account, createdAt, started ? createdAt : null);
  }

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-usage-"));
    db = openDb(dir);
    ledger = new UsageLedger(db, () => live.entries());
  });
  afterAll(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("books the growth between persists on the UTC day it was persisted, and keeps the row's lifetime totals", () => {
    sandboxRow("sbx_A", at("2025-06-01T23:00:00Z"));
    sandboxRow("sbx_B", at("2025-06-02T10:00:00Z"));
    sandboxRow("sbx_FAILED", at("2025-06-02T11:00:00Z"), false);
    ledger.persist("sbx_A", { cpuSeconds: 10, gbSeconds: 100 }, at("2025-06-01T23:59:59Z"));
    ledger.persist("sbx_A", { cpuSeconds: 25, gbSeconds: 160 }, at("2025-06-02T00:00:09Z"));
    ledger.persist("sbx_B", { cpuSeconds: 3600, gbSeconds: 7200 }, at("2025-06-03T12:00:00Z"));
    // Nothing new: no row written.
    ledger.persist("sbx_B", { cpuSeconds: 3600, gbSeconds: 7200 }, at("2025-06-04T12:00:00Z"));
    expect(db.prepare("SELECT cpu_seconds, gb_seconds FROM sandboxes WHERE id='sbx_A'").get()).toEqual({
      cpu_seconds: 25,
      gb_seconds: 160,
    });
    expect(
      db.prepare("SELECT date, cpu_seconds FROM usage_daily WHERE sandbox_id='sbx_A' ORDER BY date").all(),
    ).toEqual([
      { date: "2025-06-01", cpu_seconds: 10 },
      { date: "2025-06-02", cpu_seconds: 15 },
    ]);

    const r = ledger.report(ACC, "2025-05-31", "2025-06-04");
    expect(r).toMatchObject({
      currency: "EUR",
      granularity: "day",
      from: "2025-05-31T00:00:00Z",
      to: "2025-06-04T23:59:59Z",
    });
    expect(r.series.map((d) => [d.date, d.cpu_seconds, d.gb_seconds, d.sandboxes_created])).toEqual([
      ["2025-05-31", 0, 0, 0],
      ["2025-06-01", 10, 100, 1],
      ["2025-06-02", 15, 60, 1],
      ["2025-06-03", 3600, 7200, 0],
      ["2025-06-04", 0, 0, 0],
    ]);
    // A start that failed never ran: it is not counted as created.
    expect(r.totals).toEqual({
      cpu_seconds: 3625,
      gb_seconds: 7360,
      sandboxes_created: 2,
      cost_eur: Math.round(costEur(3625, 7360) * 1e6) / 1e6,
    });
    // 1 vCPU-hour at 0.045 plus 2 GiB-hours at 0.015.
    expect(r.series[3]!.cost_eur).toBeCloseTo(0.045 + 0.03, 9);
    expect(r.by_sandbox.map((s) => s.id)).toEqual(["sbx_B", "sbx_A"]);
    expect(r.by_sandbox[1]).toMatchObject({
      id: "sbx_A",
      cpu_seconds: 25,
      gb_seconds: 160,
      template: "python-3.12",
      status: "running",
    });

    const onlyA = ledger.report(ACC, "2025-06-02", "2025-06-02", ["sbx_A"]);
    expect(onlyA.totals).toMatchObject({ cpu_seconds: 15, gb_seconds: 60, sandboxes_created: 0 });
    expect(onlyA.by_sandbox.map((s) => s.id)).toEqual(["sbx_A"]);
    expect(ledger.lifetimeCostEur(ACC)).toBeCloseTo(costEur(3625, 7360), 12);
  });

  it("adds what live meters counted since their last persist, on today", () => {
    const today = new Date().toISOString().slice(0, 10);
    sandboxRow("sbx_LIVE", Date.now());
    ledger.persist("sbx_LIVE", { cpuSeconds: 1, gbSeconds: 2 });
    live.set("sbx_LIVE", { cpuSeconds: 4, gbSeconds: 10 });
    const r = ledger.report(ACC, today, today, ["sbx_LIVE"]);
    expect(r.totals).toMatchObject({ cpu_seconds: 4, gb_seconds: 10, sandboxes_created: 1 });
    expect(r.by_sandbox).toMatchObject([{ id: "sbx_LIVE", cpu_seconds: 4, gb_seconds: 10 }]);
    // Not in a window that ends before today.
    expect(ledger.report(ACC, "2025-06-01", "2025-06-01", ["sbx_LIVE"]).totals.cpu_seconds).toBe(0);
    expect(ledger.lifetimeCostEur(ACC)).toBeCloseTo(costEur(3625 + 4, 7360 + 10), 12);
    live.clear();
  });

  it("lists the 50 costliest sandboxes, costliest first", () => {
    const t = at("2025-07-01T12:00:00Z");
    for (let i = 0; i < 60; i++) {
      sandboxRow(`sbx_MANY${String(i).padStart(2, "0")}`, t);
      ledger.persist(`sbx_MANY${String(i).padStart(2, "0")}`, { cpuSeconds: i + 1, gbSeconds: 0 }, t);
    }
    const r = ledger.report(ACC, "2025-07-01", "2025-07-01");
    expect(r.by_sandbox).toHaveLength(50);
    expect(r.by_sandbox[0]!.id).toBe("sbx_MANY59");
    expect(r.by_sandbox[49]!.id).toBe("sbx_MANY10");
    expect(r.totals.sandboxes_created).toBe(60);
  });

  it("counts one account's sandboxes only: another's usage and live meters never show", () => {
    const other = ensureAccount(db, "usage-other").id;
    const t = at("2025-08-01T12:00:00Z");
    sandboxRow("sbx_MINE", t);
    sandboxRow("sbx_THEIRS", t, true, other);
    ledger.persist("sbx_MINE", { cpuSeconds: 7, gbSeconds: 1 }, t);
    ledger.persist("sbx_THEIRS", { cpuSeconds: 500, gbSeconds: 900 }, t);
    const before = ledger.lifetimeCostEur(ACC);
    live.set("sbx_THEIRS", { cpuSeconds: 600, gbSeconds: 1000 });
    const mine = ledger.report(ACC, "2025-08-01", "2025-08-01");
    expect(mine.totals).toMatchObject({ cpu_seconds: 7, gb_seconds: 1, sandboxes_created: 1 });
    expect(mine.by_sandbox.map((s) => s.id)).toEqual(["sbx_MINE"]);
    const theirs = ledger.report(other, "2025-08-01", "2025-08-01");
    expect(theirs.totals).toMatchObject({ cpu_seconds: 500, gb_seconds: 900, sandboxes_created: 1 });
    // A sandbox id of the other account in the filter matches nothing of this one.
    expect(ledger.report(ACC, "2025-08-01", "2025-08-01", ["sbx_THEIRS"]).totals.cpu_seconds).toBe(0);
    expect(ledger.lifetimeCostEur(other)).toBeCloseTo(costEur(600, 1000), 12);
    // The other account's live meter moved nothing of this account's credit.
    expect(ledger.lifetimeCostEur(ACC)).toBe(before);
    live.clear();
  });

  it("spans months and leap days", () => {
    expect(datesBetween("2024-02-27", "2024-03-01")).toEqual(["2024-02-27", "2024-02-28", "2024-02-29", "2024-03-01"]);
    expect(datesBetween("2025-01-01", "2025-12-31")).toHaveLength(365);
    expect(datesBetween("2025-01-02", "2025-01-01")).toEqual([]);
    expect(Date.parse("2025-01-01T00:00:00Z") + 364 * DAY).toBe(Date.parse("2025-12-31T00:00:00Z"));
  });
});

describe("GET /v1/sandboxes/usage on the local engine", () => {
  let e: EngineHandle;
  beforeAll(async () => {
    e = await startEngine({ env: { ORKESTR_ENGINE_SAMPLE_MS: "200", ORKESTR_ENGINE_PLAN: "payg" } });
  });
  afterAll(async () => {
    await e?.stop();
  });

  const today = () => new Date().toISOString().slice(0, 10);

  it("meters a sandbox that burned CPU: the report agrees with /metrics lifetime and with the limits' trial credit", async () => {
    const id = await createSandbox(e);
    await exec(e, id, "timeout 1.5 sh -c 'while :; do :; done'; true", { timeout_seconds: 10 });
    await new Promise((r) => setTimeout(r, 500));

    // Running: both read the live meter; a sample may land between the two calls.
    const running = (await e.api("GET", `/sandboxes/usage?sandbox_id=${id}`)).body;
    const liveMetrics = (await e.api("GET", `/sandboxes/${id}/metrics`)).body;
    expect(running.by_sandbox[0].id).toBe(id);
    // The machine is shared: a 1.5 s busy loop gets what the scheduler gives it.
    expect(running.by_sandbox[0].cpu_seconds).toBeGreaterThan(0.2);
    expect(Math.abs(running.by_sandbox[0].cpu_seconds - liveMetrics.lifetime.cpu_seconds)).toBeLessThan(0.3);

    // Paused and terminated: the meter is stopped and persisted, so the figures are equal.
    for (const step of ["pause", "terminate"] as const) {
      if (step === "pause") expect((await e.api("POST", `/sandboxes/${id}/pause`)).status).toBe(200);
      else expect((await e.api("DELETE", `/sandboxes/${id}`)).status).toBe(204);
      const m = (await e.api("GET", `/sandboxes/${id}/metrics`)).body;
      const u = await e.api("GET", `/sandboxes/usage?sandbox_id=${id}`);
      expect(u.status).toBe(200);
      const mine = u.body.by_sandbox[0];
      expect({ step, cpu: mine.cpu_seconds, gb: mine.gb_seconds }).toEqual({
        step,
        cpu: m.lifetime.cpu_seconds,
        gb: m.lifetime.gb_seconds,
      });
      expect(mine.cost_eur).toBeCloseTo(costEur(m.lifetime.cpu_seconds, m.lifetime.gb_seconds), 5);
      expect(u.body.totals).toMatchObject({
        cpu_seconds: mine.cpu_seconds,
        gb_seconds: mine.gb_seconds,
        sandboxes_created: 1,
      });
    }

    const all = await e.api("GET", "/sandboxes/usage");
    expect(all.status).toBe(200);
    const r = all.body;
    expect(Object.keys(r)).toEqual(
      expect.arrayContaining([
        "currency",
        "from",
        "to",
        "totals",
        "trial_credit_eur",
        "trial_credit_used_eur",
        "series",
        "by_sandbox",
      ]),
    );
    expect(r.currency).toBe("EUR");
    // Default window: the last 30 UTC days, today included.
    expect(r.series).toHaveLength(30);
    expect(r.series[29].date).toBe(today());
    expect(r.to).toBe(`${today()}T23:59:59Z`);
    expect(r.from).toMatch(/^\d{4}-\d{2}-\d{2}T00:00:00Z$/);
    for (const d of r.series)
      expect(Object.keys(d).sort()).toEqual(["cost_eur", "cpu_seconds", "date", "gb_seconds", "sandboxes_created"]);
    const sum = (k: string) => r.series.reduce((a: number, d: Record<string, number>) => a + d[k]!, 0);
    expect(sum("cpu_seconds")).toBeCloseTo(r.totals.cpu_seconds, 2);
    expect(sum("sandboxes_created")).toBe(r.totals.sandboxes_created);
    expect(r.totals.cost_eur).toBeCloseTo(costEur(r.totals.cpu_seconds, r.totals.gb_seconds), 5);
    expect(r.by_sandbox.map((s: { id: string }) => s.id)).toContain(id);

    const limits = (await e.api("GET", "/sandboxes/limits")).body;
    expect(r.trial_credit_eur).toBe(limits.trial_credit_eur);
    expect(r.trial_credit_used_eur).toBe(limits.trial_credit_used_eur);
    expect(r.trial_credit_used_eur).toBeCloseTo(r.totals.cost_eur, 5);

    const alias = await e.api("GET", `/usage?from=${today()}&to=${today()}`);
    expect(alias.status).toBe(200);
    expect(alias.body.series).toHaveLength(1);
    expect(alias.body.totals.cpu_seconds).toBe(r.totals.cpu_seconds);
  });

  it("validates from, to, granularity and sandbox_id", async () => {
    const cases: [string, number, string][] = [
      ["from=yesterday", 422, "validation_error"],
      ["to=2025-13-01", 422, "validation_error"],
      ["from=2025-02-30", 422, "validation_error"],
      ["from=2025-06-10&to=2025-06-01", 422, "validation_error"],
      ["from=2020-01-01&to=2025-01-01", 422, "validation_error"],
      ["granularity=hour", 422, "validation_error"],
      ["sandbox_id=sbx_00000000000000000000000000", 404, "sandbox_not_found"],
    ];
    for (const [q, status, code] of cases) {
      const r = await e.api("GET", `/sandboxes/usage?${q}`);
      expect({ q, status: r.status, code: r.body.code }).toEqual({ q, status, code });
      expect(r.body.detail).toBeTruthy();
    }
    const flipped = await e.api("GET", "/sandboxes/usage?from=2025-06-10&to=2025-06-01");
    expect(flipped.body.detail[0].loc).toEqual(["query", "from"]);
    // RFC 3339 times and unix seconds name their UTC day.
    const r = await e.api("GET", "/sandboxes/usage?from=2025-06-01T23:30:00-02:00&to=1749081600&granularity=day");
    expect(r.status).toBe(200);
    expect([r.body.from, r.body.to]).toEqual(["2025-06-02T00:00:00Z", "2025-06-05T23:59:59Z"]);
    expect(r.body.series.map((d: { date: string }) => d.date)).toEqual([
      "2025-06-02",
      "2025-06-03",
      "2025-06-04",
      "2025-06-05",
    ]);
    expect(r.body.totals).toEqual({ cpu_seconds: 0, gb_seconds: 0, sandboxes_created: 0, cost_eur: 0 });
    expect(r.body.by_sandbox).toEqual([]);
  });
});
