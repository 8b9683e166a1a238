import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, exec, startEngine, type EngineHandle } from "./helpers/engine.js";

/** Plan limits with the seed's numbers, enforced with the contract's codes (engine-only). */
describe("free plan", () => {
  let e: EngineHandle;
  beforeAll(async () => {
    e = await startEngine({ env: { ORKESTR_ENGINE_PLAN: "free" } });
  });
  afterAll(async () => {
    await e?.stop();
  });

  it("reports the free plan's limits", async () => {
    const l = (await e.api("GET", "/sandboxes/limits")).body;
    expect(l).toMatchObject({
      plan: "free",
      allowed_sizes: ["small"],
      trial_credit_eur: 5,
      max_paused: 1,
      max_timeout_seconds: 1800,
      max_running_seconds: 3600,
      network_open_allowed: false,
      previews_allowed: false,
      ram_budget_mb: 2048,
    });
    expect(l.sizes.find((s: { size: string }) => s.size === "medium").allowed).toBe(false);
  });

  it("refuses sizes, open network and long countdowns outside the plan", async () => {
    const medium = await e.api("POST", "/sandboxes", { template: "python-3.12", size: "medium" });
    expect([medium.status, medium.body.code]).toEqual([403, "size_not_allowed"]);
    const legacy = await e.api("POST", "/sandboxes", { template: "python-3.12", memory_mb: 4096 });
    expect([legacy.status, legacy.body.code]).toEqual([403, "size_not_allowed"]);
    const open = await e.api("POST", "/sandboxes", { template: "python-3.12", network: "open" });
    expect([open.status, open.body.code]).toEqual([403, "payment_verification_required"]);
    const long = await e.api("POST", "/sandboxes", { template: "python-3.12", timeout_seconds: 3600 });
    expect([long.status, long.body.code]).toEqual([403, "plan_limit"]);
  });

  it("gates concurrency by the 2 GiB RAM budget, and paused sandboxes free their RAM", async () => {
    const a = await createSandbox(e);
    const b = await createSandbox(e);
    const c = await e.api("POST", "/sandboxes", { template: "python-3.12" });
    expect([c.status, c.body.code]).toEqual([429, "concurrency_limit"]);
    expect(c.headers.get("retry-after")).toBeTruthy();
    expect((await e.api("POST", `/sandboxes/${a}/pause`)).status).toBe(200);
    const d = await createSandbox(e);
    // One paused sandbox is the free cap.
    const p2 = await e.api("POST", `/sandboxes/${b}/pause`);
    expect([p2.status, p2.body.code]).toEqual([409, "snapshot_cap_reached"]);
    // Resuming would exceed the budget again.
    const r = await e.api("POST", `/sandboxes/${a}/resume`);
    expect([r.status, r.body.code]).toEqual([429, "concurrency_limit"]);
    for (const id of [a, b, d]) await e.api("DELETE", `/sandboxes/${id}`);
  });

  it("caps set_timeout at the plan's countdown", async () => {
    const id = await createSandbox(e);
    const r = await e.api("POST", `/sandboxes/${id}/timeout`, { timeout_seconds: 7200 });
    expect([r.status, r.body.code]).toEqual([403, "plan_limit"]);
    expect((await e.api("POST", `/sandboxes/${id}/timeout`, { timeout_seconds: 1800 })).status).toBe(200);
    await e.api("DELETE", `/sandboxes/${id}`);
  });
});

describe("trial credit", () => {
  let e: EngineHandle;
  beforeAll(async () => {
    // A tiny credit so real metered CPU exhausts it within the test.
    e = await startEngine({
      env: { ORKESTR_ENGINE_PLAN: "free", ORKESTR_ENGINE_TRIAL_CREDIT_EUR: "0.00001", ORKESTR_ENGINE_SAMPLE_MS: "200" },
    });
  });
  afterAll(async () => {
    await e?.stop();
  });

  it("refuses creates with 402 trial_exhausted once metered usage reaches the credit", async () => {
    const id = await createSandbox(e);
    await exec(e, id, "timeout 2 sh -c 'while :; do :; done'; true", { timeout_seconds: 10 });
    await new Promise((r) => setTimeout(r, 500));
    const l = (await e.api("GET", "/sandboxes/limits")).body;
    expect(l.trial_credit_used_eur).toBeGreaterThanOrEqual(0.00001);
    const r = await e.api("POST", "/sandboxes", { template: "python-3.12" });
    expect([r.status, r.body.code]).toEqual([402, "trial_exhausted"]);
  });
});

describe("enterprise plan", () => {
  let e: EngineHandle;
  beforeAll(async () => {
    e = await startEngine({ env: { ORKESTR_ENGINE_PLAN: "enterprise" } });
  });
  afterAll(async () => {
    await e?.stop();
  });

  it("offers every size with the enterprise envelope", async () => {
    const l = (await e.api("GET", "/limits")).body;
    expect(l).toMatchObject({
      plan: "enterprise",
      allowed_sizes: ["small", "medium", "large"],
      ram_budget_mb: 131072,
      max_paused: 50,
    });
    const id = await createSandbox(e, { size: "large" });
    const s = (await e.api("GET", `/sandboxes/${id}`)).body;
    expect(s).toMatchObject({ size: "large", cpu: 4, memory_mb: 8192 });
    const m = (await e.api("GET", `/sandboxes/${id}/metrics`)).body;
    expect(m.memory.limit_bytes).toBe(8192 * 1024 * 1024);
    expect((await exec(e, id, "cat /proc/self/cgroup >/dev/null; nproc")).exit_code).toBe(0);
  });
});
