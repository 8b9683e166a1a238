import { afterEach, describe, expect, it } from "vitest";
import { injectEngine, type InjectEngine } from "../helpers/inject.js";

/**
 * GET /v1/limits says why each size is refused (the plan's refusal, or this machine's RAM), what
 * happens when the trial credit is used up, and reports the host clamp and isolation report the
 * console's Limits page shows.
 */
let e: InjectEngine | undefined;
afterEach(async () => {
  await e?.close();
  e = undefined;
});

describe("GET /v1/limits", () => {
  it("free plan: sizes outside the plan carry the plan's reason, and the credit is a hard wall", async () => {
    e = await injectEngine({ ORKESTR_ENGINE_PLAN: "free", ORKESTR_ENGINE_HOST_MEMORY_MB: "65536" });
    const r = await e.call("GET", "/v1/limits");
    expect(r.status, r.text).toBe(200);
    expect(r.body.plan).toBe("free");
    expect(r.body.trial_is_hard_limit).toBe(true);
    const bySize = Object.fromEntries(r.body.sizes.map((s: { size: string }) => [s.size, s]));
    expect(bySize.small).toMatchObject({ allowed: true, fits_host: true, reason: null });
    expect(bySize.medium).toMatchObject({ allowed: false, fits_host: true });
    expect(bySize.medium.reason).toMatch(/free plan offers small only.*403 size_not_allowed/);
    expect(bySize.large.reason).toMatch(/free plan offers small only/);
    // The same answer on both paths.
    const alias = await e.call("GET", "/v1/sandboxes/limits");
    expect(alias.body.sizes).toEqual(r.body.sizes);
  });

  it("a machine too small for a size says so though the plan allows it; payg bills past the credit", async () => {
    // 6 GiB: 1 GiB is kept for the host, so 5120 MB for sandboxes hold a medium (4096) but not a large (8192).
    e = await injectEngine({ ORKESTR_ENGINE_PLAN: "payg", ORKESTR_ENGINE_HOST_MEMORY_MB: "6144" });
    const r = await e.call("GET", "/v1/limits");
    expect(r.status, r.text).toBe(200);
    expect(r.body.trial_is_hard_limit).toBe(false);
    expect(r.body.host_capacity.memory_total_mb).toBe(6144);
    expect(r.body.host_capacity.memory_for_sandboxes_mb).toBe(5120);
    expect(r.body.host_capacity.test_overrides.length).toBeGreaterThan(0);
    const bySize = Object.fromEntries(r.body.sizes.map((s: { size: string }) => [s.size, s]));
    expect(bySize.medium).toMatchObject({ allowed: true, fits_host: true, reason: null });
    expect(bySize.large).toMatchObject({ allowed: true, fits_host: false });
    expect(bySize.large.reason).toBe(
      "This machine keeps 5120 MiB of RAM for sandboxes and a large sandbox needs 8192 MiB: a create answers 503 fleet_full.",
    );
    // The isolation report: what is enforced and degraded, one sentence each.
    expect(["bwrap-userns", "bwrap-root", "unavailable"]).toContain(r.body.isolation.mode);
    expect(Array.isArray(r.body.isolation.enforced)).toBe(true);
    expect(Array.isArray(r.body.isolation.degraded)).toBe(true);
  });
});
