import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, exec, startEngine, type EngineHandle } from "./helpers/engine.js";

/**
 * A named snapshot is written to the engine's data disk, so it is admitted against that disk like
 * a volume or a template: before its copy starts it reserves what the sandbox's /workspace and /tmp
 * hold, and is refused with 503 fleet_full when that does not fit. The disk is made small with the
 * test knobs: 120 MiB "free" − 100 kept = 20 MiB for volumes, templates and snapshots, while the
 * payg plan's 10 named snapshots would still admit every one of them.
 */
let e: EngineHandle;
let dataDir: string;

beforeAll(async () => {
  dataDir = fs.mkdtempSync("/var/tmp/baton-snapshot-disk-");
  e = await startEngine({
    dataDir,
    env: {
      ORKESTR_ENGINE_PLAN: "payg",
      ORKESTR_ENGINE_HOST_DISK_FREE_MB: "120",
      ORKESTR_ENGINE_DISK_RESERVE_MB: "100",
    },
  });
});
afterAll(async () => {
  await e?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

const hostCapacity = async () => (await e.api("GET", "/sandboxes/limits")).body.host_capacity;

describe("snapshots and the data disk", () => {
  it("a snapshot larger than the disk has left is 503 fleet_full, and leaves nothing behind", async () => {
    const big = await createSandbox(e);
    await exec(e, big, "head -c 24000000 /dev/urandom > /workspace/big && head -c 2000000 /dev/urandom > /tmp/t");
    expect((await hostCapacity()).disk_available_mb).toBe(20);

    const r = await e.api("POST", `/sandboxes/${big}/snapshots`, { name: "too-big" });
    expect([r.status, r.body.code, r.body.resource]).toEqual([503, "fleet_full", "disk"]);
    expect(r.headers.get("retry-after")).toBe("30");
    expect(r.body.needed_mb).toBeGreaterThanOrEqual(25);
    expect(r.body.available_mb).toBe(20);
    expect(r.body.detail).toMatch(
      new RegExp(
        `^This machine's data disk has 20 MiB left for volumes, templates and snapshots .* and a snapshot of ${big} \\(its /workspace and /tmp hold 2\\d MiB\\) needs 2\\d MiB\\. This is the machine's capacity, not your plan's limit`,
      ),
    );
    expect((await e.api("GET", "/snapshots")).body).toEqual([]);
    expect((await e.api("GET", "/snapshots/too-big")).status).toBe(404);
    expect(fs.readdirSync(path.join(dataDir, "engine", "snapshots"))).toEqual([]);
    // Nothing stays reserved for the refused snapshot.
    expect((await hostCapacity()).disk_committed_mb).toBe(0);
    expect((await e.api("DELETE", `/sandboxes/${big}`)).status).toBe(204);
  });

  it("one that fits is taken; its reservation is given back once it is written, and a delete frees its files", async () => {
    const small = await createSandbox(e);
    await exec(e, small, "head -c 6000000 /dev/urandom > /workspace/data");
    const r = await e.api("POST", `/sandboxes/${small}/snapshots`, { name: "fits" });
    expect(r.status, r.text).toBe(201);
    expect(r.body.size_mb).toBeGreaterThanOrEqual(6);
    expect((await hostCapacity()).disk_committed_mb).toBe(0);
    // The sandbox grows past what is left: its next snapshot is refused, the first one stays.
    await exec(e, small, "head -c 20000000 /dev/urandom > /workspace/more");
    const again = await e.api("POST", `/sandboxes/${small}/snapshots`, { name: "grown" });
    expect([again.status, again.body.code, again.body.resource]).toEqual([503, "fleet_full", "disk"]);
    expect((await e.api("GET", "/snapshots")).body.map((s: { name: string }) => s.name)).toEqual(["fits"]);
    expect((await e.api("DELETE", "/snapshots/fits")).status).toBe(204);
    expect(fs.readdirSync(path.join(dataDir, "engine", "snapshots"))).toEqual([]);
    expect((await e.api("DELETE", `/sandboxes/${small}`)).status).toBe(204);
  });
});
