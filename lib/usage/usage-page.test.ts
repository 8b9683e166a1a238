import { describe, expect, it } from "vitest";
import { csvField, parseCsv, tableCsv } from "./csv";
import { hoursLeft, nextPollMs, USAGE_MIN_POLL_MS, USAGE_POLL_MS } from "./live";
import { lastMonth, parseDay, rangeFromParams, rangeProblem, thisMonth } from "./range";
import type { UsageDay, UsageMember, UsageSandbox } from "./report";
import { dayRows, MAX_SERIES, memberLabel, OTHERS_KEY, seriesKeys } from "./series";
import { daysTable, eurValue, membersTable, sandboxesTable, sortSandboxes } from "./tables";

const NOW = Date.UTC(2026, 11, 6, 1, 0, 0); // 2026-12-06 01:00 UTC

const day = (date: string, by_member: Record<string, number>, by_template: Record<string, number> = {}): UsageDay => ({
  date,
  cpu_seconds: 0,
  gib_seconds: 0,
  cost_micro: Object.values(by_member).reduce((s, v) => s + v, 0),
  by_member,
  by_template,
});
const member = (user_id: string | null, name: string | null, cost_micro = 0): UsageMember => ({
  user_id,
  name,
  email: null,
  cpu_seconds: 0,
  gib_seconds: 0,
  cost_micro,
  sandboxes: 1,
});

describe("date range", () => {
  it("is this month (UTC) by default and reads a valid range from the URL", () => {
    expect(thisMonth(NOW)).toEqual({ from: "2026-12-01", to: "2026-12-06" });
    expect(lastMonth(NOW)).toEqual({ from: "2026-11-01", to: "2026-11-30" });
    expect(rangeFromParams(new URLSearchParams(), NOW)).toEqual({ range: thisMonth(NOW), problem: null });
    expect(rangeFromParams(new URLSearchParams("from=2026-11-03&to=2026-11-09&team=a"), NOW)).toEqual({
      range: { from: "2026-11-03", to: "2026-11-09" },
      problem: null,
    });
  });
  it("refuses impossible days, reversed, future and over-long ranges", () => {
    expect(parseDay("2026-02-30")).toBeNull();
    expect(parseDay("2026-2-3")).toBeNull();
    expect(rangeProblem({ from: "2026-12-05", to: "2026-12-01" }, NOW)).toMatch(/before the start/);
    expect(rangeProblem({ from: "2026-12-07", to: "2026-12-08" }, NOW)).toMatch(/future/);
    expect(rangeProblem({ from: "2025-01-01", to: "2026-12-01" }, NOW)).toMatch(/longer than 366/);
    const bad = rangeFromParams(new URLSearchParams("from=nope&to=2026-12-01"), NOW);
    expect(bad.range).toEqual(thisMonth(NOW));
    expect(bad.problem).toMatch(/not a date.*this month instead/);
  });
});

describe("stacked series", () => {
  const members = [member("u1", "Ana"), member("u2", "Ben")];
  it("names members, outside Baton and former members", () => {
    expect(memberLabel("u1", members)).toBe("Ana");
    expect(memberLabel(null, members)).toBe("outside Baton");
    expect(memberLabel("", members)).toBe("outside Baton");
    expect(memberLabel("u999999999", members)).toBe("former member (u9999999)");
  });
  it("stacks most costly first, each day's values summing to its total", () => {
    const days = [day("2026-12-01", { u1: 10, "": 5 }), day("2026-12-02", { u2: 30 }), day("2026-12-03", {})];
    const keys = seriesKeys(days, "member", members);
    expect(keys.map((k) => [k.label, k.total_micro])).toEqual([
      ["Ben", 30],
      ["Ana", 10],
      ["outside Baton", 5],
    ]);
    const rows = dayRows(days, "member", keys);
    for (const r of rows) expect(Object.values(r.values).reduce((s, v) => s + v, 0)).toBe(r.total_micro);
    expect(rows[2]!.values).toEqual({ u2: 0, u1: 0, "": 0 });
  });
  it("sums the long tail as Others", () => {
    const by = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`t${i}`, 100 - i]));
    const days = [day("2026-12-01", { u1: 1 }, by)];
    days[0]!.cost_micro = Object.values(by).reduce((s, v) => s + v, 0);
    const keys = seriesKeys(days, "template", []);
    expect(keys).toHaveLength(MAX_SERIES);
    expect(keys.at(-1)).toMatchObject({ key: OTHERS_KEY, label: "Others (4)", total_micro: 95 + 94 + 93 + 92 });
    const row = dayRows(days, "template", keys)[0]!;
    expect(Object.values(row.values).reduce((s, v) => s + v, 0)).toBe(row.total_micro);
  });
});

describe("tables and CSV", () => {
  it("writes money exactly from whole micro-euros", () => {
    expect(eurValue(1_234_567)).toBe("1.234567");
    expect(eurValue(5)).toBe("0.000005");
    expect(eurValue(-1_000_000)).toBe("-1.000000");
    expect(eurValue(0)).toBe("0.000000");
  });
  it("quotes, and keeps formulas from running", () => {
    expect(csvField('a,"b"')).toBe('"a,""b"""');
    expect(csvField("=HYPERLINK(1)")).toBe("'=HYPERLINK(1)");
    expect(csvField("-0.000005")).toBe("-0.000005");
  });
  it("the CSV has exactly the rows and columns of the table shown", () => {
    const members = [member("u1", 'Ana "A", B'), member(null, null)];
    const days = [day("2026-12-01", { u1: 1_500_000, "": 2 }), day("2026-12-02", {})];
    const keys = seriesKeys(days, "member", members);
    const table = daysTable(dayRows(days, "member", keys), keys, "member");
    const parsed = parseCsv(tableCsv(table));
    expect(parsed[0]).toEqual(table.columns);
    expect(parsed.slice(1)).toEqual(table.rows.map((r) => r.cells.map((c) => c.value)));
    expect(parsed[1]).toEqual(["2026-12-01", "1.500000", "0.000002", "1.500002"]);
    expect(table.rows[0]!.cells[1]!.text).toBe("€1.50");
    const m = membersTable([member("u1", "Ana", 7), member(null, null, 9)]);
    expect(parseCsv(tableCsv(m)).map((r) => r[0])).toEqual(["Member", "outside Baton", "Ana"]);
  });
  it("sorts sandboxes by cost, CPU or memory and links each", () => {
    const sb = (id: string, cost_micro: number, cpu_seconds: number, gib_seconds: number): UsageSandbox => ({
      id,
      user_id: null,
      template: "base",
      status: "running",
      last_read_at: null,
      cost_micro,
      cpu_seconds,
      gib_seconds,
    });
    const all = [sb("a", 1, 30, 1), sb("b", 3, 10, 2), sb("c", 2, 20, 3)];
    expect(sortSandboxes(all, "cost").map((s) => s.id)).toEqual(["b", "c", "a"]);
    expect(sortSandboxes(all, "cpu").map((s) => s.id)).toEqual(["a", "c", "b"]);
    expect(sortSandboxes(all, "memory").map((s) => s.id)).toEqual(["c", "b", "a"]);
    const t = sandboxesTable(all, [], "cost", 2, (id) => `/sandboxes/${id}`);
    expect(t.rows.map((r) => r.cells[0])).toEqual([
      { text: "b", value: "b", href: "/sandboxes/b" },
      { text: "c", value: "c", href: "/sandboxes/c" },
    ]);
  });
});

describe("live figures", () => {
  it("polls just after the next reading, within bounds", () => {
    expect(nextPollMs(undefined, NOW)).toBe(USAGE_POLL_MS);
    expect(nextPollMs({ next_reading_at: new Date(NOW + 10_000).toISOString() }, NOW)).toBe(11_000);
    expect(nextPollMs({ next_reading_at: new Date(NOW - 10_000).toISOString() }, NOW)).toBe(USAGE_MIN_POLL_MS);
    expect(nextPollMs({ next_reading_at: new Date(NOW + 600_000).toISOString() }, NOW)).toBe(USAGE_POLL_MS);
  });
  it("counts the hours left in the month", () => {
    expect(hoursLeft({ ends_at: "2027-01-01T00:00:00.000Z" }, new Date(NOW).toISOString())).toBe(26 * 24 - 1);
  });
});

describe("rate card form", () => {
  it("reads EUR text into whole micro-euros without floats, and back", async () => {
    const { parseEurToMicro, microToEurText, readRatesDraft, ratesSentence } = await import("./rates-form");
    const { SEED_RATES } = await import("./report");
    expect(parseEurToMicro("0.045")).toBe(45_000);
    expect(parseEurToMicro("0,015")).toBe(15_000);
    expect(parseEurToMicro("1.1")).toBe(1_100_000);
    expect(parseEurToMicro("-1")).toBeNull();
    expect(parseEurToMicro("0.0000001")).toBeNull();
    expect(microToEurText(100_000)).toBe("0.1");
    expect(ratesSentence(SEED_RATES)).toMatch(
      /^EUR 0.045 per vCPU-hour.*EUR 0.015 per GiB-hour.*EUR 0.1 per GB-month.*10 GB free$/,
    );
    const bad = readRatesDraft({ vcpu: "x", gib: "0.015", storage: "0.1", free: "-2" });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && Object.keys(bad.errors)).toEqual(["vcpu", "free"]);
    const big = readRatesDraft({ vcpu: "100.000001", gib: "0.015", storage: "0.1", free: "10.5" });
    expect(!big.ok && big.errors).toEqual({
      vcpu: "An amount in EUR, 0 or more, at most six decimals (0.045), at most 100.",
      free: "A whole number of GB, 0 to 1000000.",
    });
    expect(readRatesDraft({ vcpu: "0.05", gib: "0.02", storage: "0.2", free: "5" })).toEqual({
      ok: true,
      rates: { vcpu_hour_micro: 50_000, gib_hour_micro: 20_000, storage_gb_month_micro: 200_000, free_storage_gb: 5 },
    });
  });
});
