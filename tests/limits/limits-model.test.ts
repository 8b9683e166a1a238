import { describe, expect, it } from "vitest";
import { limitsSnippets } from "../../components/limits/limits-code";
import { gaugePercent, gauges, gaugeState, isLocalEngine, sizeRows } from "../../components/limits/limits-model";
import type { Limits } from "../../lib/orkestr/schemas/limits";

// What the Limits page makes of one GET /v1/sandboxes/limits answer: figures exactly as reported,
// nothing invented for a field the server leaves out.

const FREE: Limits = {
  plan: "free",
  allowed_sizes: ["small"],
  ram_budget_mb: 2048,
  effective_ram_budget_mb: 2048,
  ram_used_mb: 1024,
  running: 1,
  paused: 1,
  max_paused: 1,
  named_snapshots: 0,
  max_named_snapshots: 1,
  volumes: 0,
  max_volumes: 1,
  max_volume_gb: 10,
  templates: 4,
  max_templates: 5,
  trial_credit_eur: 5,
  trial_credit_used_eur: 0.001234,
  trial_is_hard_limit: true,
  sizes: [
    { size: "small", cpu: 1, memory_mb: 1024, allowed: true, fits_host: true, reason: null },
    {
      size: "medium",
      cpu: 2,
      memory_mb: 4096,
      allowed: false,
      fits_host: true,
      reason: "The free plan offers small only.",
    },
  ],
  engine: { name: "baton-engine", kind: "local" },
};

const byId = (l: Limits) => Object.fromEntries(gauges(l).map((g) => [g.id, g]));

describe("gauges", () => {
  it("carry the answer's used and cap as they are, as text in lib/format.ts's units", () => {
    const g = byId(FREE);
    expect(g.ram).toMatchObject({ used: 1024, cap: 2048, usedText: "1 GiB", capText: "2 GiB", state: "ok" });
    expect(g.paused).toMatchObject({ used: 1, cap: 1, state: "full" });
    expect(g.snapshots).toMatchObject({ used: 0, cap: 1, state: "ok" });
    expect(g.templates).toMatchObject({ used: 4, cap: 5, state: "near" });
    expect(g.credit).toMatchObject({ used: 0.001234, cap: 5, usedText: "€0.0012", capText: "€5.00" });
  });

  it("show a few millionths of a euro of credit used as they are, not as €0.0000", () => {
    expect(byId({ ...FREE, trial_credit_used_eur: 0.000003 }).credit).toMatchObject({
      used: 0.000003,
      usedText: "€0.000003",
    });
  });

  it("read every size in binary units: the engine's MB are MiB and its GB GiB", () => {
    const g = byId({ ...FREE, ram_used_mb: 1536, ram_budget_mb: 32768, effective_ram_budget_mb: 5120 });
    expect(g.ram).toMatchObject({ usedText: "1.5 GiB", capText: "32 GiB" });
    expect(g.ram!.note).toContain("5 GiB of the budget");
    for (const gauge of Object.values(g)) {
      for (const text of [gauge.usedText, gauge.capText, gauge.atCap, gauge.note ?? ""])
        expect(text, gauge.id).not.toMatch(/\d\s?[KMGT]B\b/);
    }
  });

  it("say what happens at each cap, with the API's answer", () => {
    const g = byId(FREE);
    expect(g.ram!.atCap).toContain("429 concurrency_limit");
    expect(g.paused!.atCap).toContain("409 snapshot_cap_reached");
    expect(g.volumes!.atCap).toContain("403 plan_limit; each volume may be at most 10 GiB");
    expect(g.templates!.atCap).toContain("403 template_cap_reached");
    expect(g.credit!.atCap).toContain("402 trial_exhausted");
    expect(byId({ ...FREE, trial_is_hard_limit: false }).credit!.atCap).toContain("billed at the pay-as-you-go rates");
    // Past the credit: a wall on a hard-limit plan, metered billing on the others.
    expect(byId({ ...FREE, trial_credit_used_eur: 5 }).credit).toMatchObject({ state: "full", stateLabel: undefined });
    expect(byId({ ...FREE, trial_credit_used_eur: 6, trial_is_hard_limit: false }).credit).toMatchObject({
      state: "full",
      stateLabel: "Used up: billed",
    });
  });

  it("leave unreported figures unknown instead of inventing them", () => {
    const g = byId({ plan: "free", max_named_snapshots: 3, trial_credit_eur: 0 });
    expect(g.snapshots).toMatchObject({ used: null, cap: 3, state: "unknown", usedText: "not reported" });
    expect(g.ram).toMatchObject({ used: null, cap: null, state: "uncapped" });
    // A plan without trial credit has no credit cap.
    expect(g.credit).toMatchObject({
      cap: null,
      state: "uncapped",
      capText: "no trial credit",
      stateLabel: "No trial credit",
    });
  });

  it("note when the machine holds less of the RAM budget than the plan allows", () => {
    expect(byId(FREE).ram!.note).toBeNull();
    const clamped = byId({ ...FREE, ram_budget_mb: 32768, effective_ram_budget_mb: 5120 });
    expect(clamped.ram!.note).toContain("5 GiB");
    expect(clamped.ram!.note).toContain("503 fleet_full");
  });
});

describe("gauge arithmetic", () => {
  it("states by share of the cap", () => {
    expect(gaugeState(0, 10)).toBe("ok");
    expect(gaugeState(7, 10)).toBe("ok");
    expect(gaugeState(8, 10)).toBe("near");
    expect(gaugeState(10, 10)).toBe("full");
    expect(gaugeState(12, 10)).toBe("full");
    expect(gaugeState(0, 0)).toBe("full");
    expect(gaugeState(null, 10)).toBe("unknown");
    expect(gaugeState(3, null)).toBe("uncapped");
  });

  it("bar widths are clamped to 0–100", () => {
    expect(gaugePercent({ used: 512, cap: 2048 })).toBe(25);
    expect(gaugePercent({ used: 4096, cap: 2048 })).toBe(100);
    expect(gaugePercent({ used: 0, cap: 0 })).toBe(0);
    expect(gaugePercent({ used: null, cap: 10 })).toBe(0);
  });
});

describe("sizeRows", () => {
  it("uses the server's reasons, and says why a size the machine cannot hold is refused", () => {
    const rows = sizeRows({
      ...FREE,
      plan: "payg",
      sizes: [
        { size: "small", cpu: 1, memory_mb: 1024, allowed: true, fits_host: true, reason: null },
        {
          size: "large",
          cpu: 4,
          memory_mb: 8192,
          allowed: true,
          fits_host: false,
          reason: "This machine keeps 5120 MB",
        },
      ],
    });
    expect(rows).toEqual([
      {
        size: "small",
        cpu: 1,
        memoryMb: 1024,
        status: "available",
        reason: "The payg plan offers it and this machine can hold one.",
      },
      { size: "large", cpu: 4, memoryMb: 8192, status: "too-big-for-host", reason: "This machine keeps 5120 MB" },
    ]);
  });

  it("falls back to allowed_sizes for a server that sends no sizes or reasons", () => {
    const rows = sizeRows({ plan: "free", allowed_sizes: ["small"], sizes: [{ size: "small" }, { size: "large" }] });
    expect(rows.map((r) => [r.size, r.status, r.reason])).toEqual([
      ["small", "available", "The free plan offers it."],
      ["large", "not-on-plan", "Not offered on the free plan (it offers small)."],
    ]);
    expect(sizeRows({ allowed_sizes: ["small"] }).map((r) => r.size)).toEqual(["small"]);
  });
});

describe("the rest", () => {
  it("knows the local engine by its report", () => {
    expect(isLocalEngine(FREE)).toBe(true);
    expect(isLocalEngine({ plan: "free" })).toBe(false);
    expect(isLocalEngine({ isolation: { mode: "bwrap-root" } })).toBe(true);
  });

  it("snippets read the limits without a token, pointed at the connection's server", () => {
    const s = limitsSnippets("http://127.0.0.1:8787/v1");
    expect(s.python).toContain("Sandbox.limits()");
    expect(s.python).toContain("point the SDK's base URL there");
    expect(s.javascript).toContain("await Sandbox.limits()");
    expect(s.curl).toContain('curl "http://127.0.0.1:8787/v1/limits"');
    expect(s.curl).toContain("$ORKESTR_API_KEY");
    expect(limitsSnippets().python).not.toContain("base URL");
  });
});
