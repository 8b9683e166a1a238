import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, startEngine, type EngineHandle } from "./helpers/engine.js";

/**
 * The host clamp (security item 8) on a real engine. The machine is made small with the test knobs
 * (ORKESTR_ENGINE_HOST_MEMORY_MB, ORKESTR_ENGINE_HOST_DISK_FREE_MB) and explicit reserves, so the
 * clamp is reached with a couple of small sandboxes and volumes while the payg plan (32 GiB live,
 * 10 paused, 100 GB volumes) would still admit them.
 *
 * RAM: 3072 MiB "total" − 1024 reserved = 2048 MiB for sandboxes = two small (1 GiB) sandboxes.
 * Disk: volumes are 8 MiB per "GB" (ORKESTR_ENGINE_VOLUME_UNIT_MB), 400 MiB "free" − 100 reserved
 * = 300 MiB to promise; a template build may grow its layer to 1000 MiB, which never fits.
 */
describe("admission is clamped to the machine's capacity", () => {
  let e: EngineHandle;
  const made: string[] = [];

  beforeAll(async () => {
    e = await startEngine({
      env: {
        ORKESTR_ENGINE_PLAN: "payg",
        ORKESTR_ENGINE_HOST_MEMORY_MB: "3072",
        ORKESTR_ENGINE_MEMORY_RESERVE_MB: "1024",
        ORKESTR_ENGINE_HOST_DISK_FREE_MB: "400",
        ORKESTR_ENGINE_DISK_RESERVE_MB: "100",
        ORKESTR_ENGINE_VOLUME_UNIT_MB: "8",
        ORKESTR_ENGINE_TEMPLATE_MAX_MB: "1000",
      },
    });
  });
  afterAll(async () => {
    for (const id of made) await e?.api("DELETE", `/sandboxes/${id}`).catch(() => undefined);
    await e?.stop();
  });

  const limits = async () => (await e.api("GET", "/sandboxes/limits")).body;

  it("the limits response says what the clamp is, beside the plan's unchanged numbers", async () => {
    const l = await limits();
    // The plan's fields keep their meaning...
    expect(l).toMatchObject({ plan: "payg", ram_budget_mb: 32768, ram_used_mb: 0, max_paused: 10, max_volume_gb: 100 });
    // ...and the machine's clamp is explicit.
    expect(l.host_capacity).toMatchObject({
      memory_total_mb: 3072,
      memory_reserved_mb: 1024,
      memory_for_sandboxes_mb: 2048,
      memory_committed_mb: 0,
      memory_free_mb: 2048,
      disk_free_mb: 400,
      disk_reserved_mb: 100,
      disk_committed_mb: 0,
      disk_available_mb: 300,
      test_overrides: ["memory_total_mb", "disk_free_mb"],
    });
    expect(l.host_capacity.pids_limit).toBeGreaterThan(l.host_capacity.pids_reserved);
    expect(l.effective_ram_budget_mb).toBe(2048);
    expect(l.max_concurrent).toBe(2);
    // The start log says the same.
    expect(e.log()).toMatch(
      /host capacity: 2\.0 GiB RAM for sandboxes \(1\.0 GiB of 3\.0 GiB kept for the host\).*\[test overrides: memory_total_mb, disk_free_mb\]/,
    );
  });

  it("refuses a create past the machine's RAM with 503 fleet_full while the plan would allow it; paused sandboxes count", async () => {
    // A medium (4 GiB) sandbox is within payg's sizes and budget, but not within this machine.
    const medium = await e.api("POST", "/sandboxes", { template: "python-3.12", size: "medium" });
    expect([medium.status, medium.body.code, medium.body.resource]).toEqual([503, "fleet_full", "memory"]);
    expect(medium.headers.get("retry-after")).toBe("30");
    expect(medium.body).toMatchObject({ needed_mb: 4096, available_mb: 2048, retry_after_seconds: 30 });
    expect(medium.body.detail).toMatch(
      /^This machine has 2\.0 GiB of RAM left for sandboxes .* this sandbox needs 4\.0 GiB\. This is the machine's capacity, not your plan's limit/,
    );

    const a = await createSandbox(e);
    made.push(a);
    const b = await createSandbox(e);
    made.push(b);
    const third = await e.api("POST", "/sandboxes", { template: "python-3.12" });
    expect([third.status, third.body.code, third.body.resource]).toEqual([503, "fleet_full", "memory"]);
    let l = await limits();
    // The plan alone would take a third: 2 GiB of 32 used.
    expect(l.ram_budget_mb - l.ram_used_mb).toBeGreaterThanOrEqual(1024);
    expect(l.host_capacity).toMatchObject({ memory_committed_mb: 2048, memory_free_mb: 0 });

    // Paused: the plan's budget frees its RAM, the machine's does not (its frozen pages stay).
    expect((await e.api("POST", `/sandboxes/${a}/pause`)).status).toBe(200);
    l = await limits();
    expect(l).toMatchObject({ ram_used_mb: 1024, effective_ram_budget_mb: 1024 });
    expect(l.host_capacity).toMatchObject({ memory_committed_mb: 2048, memory_paused_mb: 1024 });
    const whilePaused = await e.api("POST", "/sandboxes", { template: "python-3.12" });
    expect([whilePaused.status, whilePaused.body.code]).toEqual([503, "fleet_full"]);
    expect(whilePaused.body.detail).toMatch(/paused ones included/);

    // Resuming adds nothing the machine had not counted already.
    const resumed = await e.api("POST", `/sandboxes/${a}/resume`);
    expect([resumed.status, resumed.body.status]).toEqual([200, "running"]);

    // Room again once one is gone.
    expect((await e.api("DELETE", `/sandboxes/${b}`)).status).toBe(204);
    const c = await createSandbox(e);
    made.push(c);
    for (const id of [a, c]) expect((await e.api("DELETE", `/sandboxes/${id}`)).status).toBe(204);
    expect((await limits()).host_capacity.memory_committed_mb).toBe(0);
  });

  it("refuses volumes, volume growth and templates past the machine's disk while the plan would allow them", async () => {
    // 15 "GB" = 120 MiB each: two fit in 300 MiB (less what their images already hold), a third does not.
    const v1 = await e.api("POST", "/volumes", { name: "cap-a", size_gb: 15 });
    expect(v1.status).toBe(201);
    const v2 = await e.api("POST", "/volumes", { name: "cap-b", size_gb: 15 });
    expect(v2.status).toBe(201);
    let l = await limits();
    // Promised = sizes not yet allocated by the sparse images (mkfs writes a few MiB of each).
    expect(l.host_capacity.disk_committed_mb).toBeGreaterThan(200);
    expect(l.host_capacity.disk_committed_mb).toBeLessThanOrEqual(240);
    const v3 = await e.api("POST", "/volumes", { name: "cap-c", size_gb: 15 });
    expect([v3.status, v3.body.code, v3.body.resource]).toEqual([503, "fleet_full", "disk"]);
    expect(v3.headers.get("retry-after")).toBe("30");
    expect(v3.body.detail).toMatch(
      /^This machine's data disk has \d+ MiB left for volumes, templates and snapshots .* and this volume needs 120 MiB\. This is the machine's capacity, not your plan's limit/,
    );
    expect((await e.api("GET", "/volumes/cap-c")).status).toBe(404);

    const grow = await e.api("PATCH", "/volumes/cap-a", { size_gb: 30 });
    expect([grow.status, grow.body.code, grow.body.resource]).toEqual([503, "fleet_full", "disk"]);
    expect(grow.body.detail).toMatch(/growing volume cap-a needs 120 MiB/);
    expect((await e.api("GET", "/volumes/cap-a")).body.size_gb).toBe(15);

    // A sandbox that names a new volume would create a 10 "GB" one (80 MiB): refused before it boots.
    const withVolume = await e.api("POST", "/sandboxes", { template: "python-3.12", volume: "cap-new" });
    expect([withVolume.status, withVolume.body.code, withVolume.body.resource]).toEqual([503, "fleet_full", "disk"]);
    expect((await e.api("GET", "/volumes/cap-new")).status).toBe(404);
    expect((await e.api("GET", "/sandboxes")).body).toEqual([]);

    // A template's layer may grow to 1000 MiB: more than the disk has room for.
    const tpl = await e.api("POST", "/templates", { name: "cap-tpl", base_image: "python-3.12", steps: ["true"] });
    expect([tpl.status, tpl.body.code, tpl.body.resource]).toEqual([503, "fleet_full", "disk"]);
    expect(tpl.body.detail).toMatch(
      /a template build \(its layer may grow to ORKESTR_ENGINE_TEMPLATE_MAX_MB\) needs 1000 MiB/,
    );

    // Deleting a volume gives its promise back.
    expect((await e.api("DELETE", "/volumes/cap-b")).status).toBe(204);
    l = await limits();
    expect(l.host_capacity.disk_committed_mb).toBeLessThanOrEqual(120);
    const v4 = await e.api("POST", "/volumes", { name: "cap-d", size_gb: 15 });
    expect(v4.status).toBe(201);
    for (const v of ["cap-a", "cap-d"]) expect((await e.api("DELETE", `/volumes/${v}`)).status).toBe(204);
  });
});
