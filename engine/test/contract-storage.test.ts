import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, exec, target, type EngineHandle } from "./helpers/engine.js";
import { until } from "./helpers/async.js";

/**
 * Named snapshots (/v1/snapshots) and volumes (/v1/volumes, with the seed's corrections) over HTTP. Runs against
 * the local engine, or any v1 server given ORKESTR_API_URL and ORKESTR_API_KEY; names carry a
 * random suffix and everything made is deleted, so it can be pointed at a real account.
 */
let e: EngineHandle;
const sandboxes: string[] = [];
const snapshots: string[] = [];
const volumes: string[] = [];
const tag = randomBytes(3).toString("hex");
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

beforeAll(async () => {
  e = await target();
});
afterAll(async () => {
  for (const id of sandboxes) await e.api("DELETE", `/sandboxes/${id}`).catch(() => undefined);
  for (const id of snapshots) await e.api("DELETE", `/snapshots/${id}`).catch(() => undefined);
  for (const id of volumes) await e.api("DELETE", `/volumes/${id}`).catch(() => undefined);
  await e?.stop();
});

async function sandbox(body: Record<string, unknown> = {}): Promise<string> {
  const id = await createSandbox(e, body);
  sandboxes.push(id);
  return id;
}

describe("limits", () => {
  it("report the snapshot and volume caps", async () => {
    const l = (await e.api("GET", "/sandboxes/limits")).body;
    for (const k of ["max_named_snapshots", "max_volumes", "max_volume_gb"]) expect(typeof l[k], k).toBe("number");
  });
});

describe("snapshots", () => {
  it("201 with the snapshot shape; a child forks from it by id, and the sandbox view says so", async () => {
    const source = await sandbox();
    await exec(e, source, "echo contract > /workspace/c");
    const r = await e.api("POST", `/sandboxes/${source}/snapshots`, { name: `contract-${tag}` });
    expect(r.status).toBe(201);
    snapshots.push(r.body.id);
    expect(r.body).toMatchObject({ name: `contract-${tag}`, sandbox_id: source, template: "python-3.12" });
    expect(r.body.id).toMatch(/^snap_/);
    expect(typeof r.body.region).toBe("string");
    expect(typeof r.body.size_mb).toBe("number");
    expect(["creating", "ready", "failed"]).toContain(r.body.status);
    expect(r.body.created_at).toMatch(ISO);
    const ready = await until(
      "the snapshot to finish creating",
      async () => {
        const x = await e.api("GET", `/snapshots/${r.body.id}`);
        return x.body.status !== "creating" && x;
      },
      { timeout: 60_000, interval: 500 },
    );
    expect(ready.body.status).toBe("ready");
    expect((await e.api("GET", `/snapshots/contract-${tag}`)).body.id).toBe(r.body.id);

    const child = await e.api("POST", "/sandboxes", { snapshot: r.body.id });
    expect([201, 202]).toContain(child.status);
    sandboxes.push(child.body.id);
    expect(child.body.snapshot).toBe(r.body.id);
    await until(
      "the sandbox from the snapshot to run",
      async () => {
        const x = await e.api("GET", `/sandboxes/${child.body.id}`);
        return x.body.status === "running" && x;
      },
      { timeout: 60_000, interval: 500 },
    );
    expect((await exec(e, child.body.id, "cat /workspace/c")).stdout).toBe("contract\n");
  });

  it("lists as a bare array filtered by sandbox_id; conflicts and unknowns carry their codes", async () => {
    const source = await sandbox();
    const s = await e.api("POST", `/sandboxes/${source}/snapshots`, { name: `listed-${tag}` });
    snapshots.push(s.body.id);
    const list = await e.api("GET", `/snapshots?sandbox_id=${source}&limit=10`);
    expect(list.status).toBe(200);
    expect(Array.isArray(list.body)).toBe(true);
    expect(list.body.map((x: { id: string }) => x.id)).toEqual([s.body.id]);
    const taken = await e.api("POST", `/sandboxes/${source}/snapshots`, { name: `listed-${tag}` });
    expect([taken.status, taken.body.code]).toEqual([409, "snapshot_name_taken"]);
    await e.api("DELETE", `/sandboxes/${source}`);
    const stopped = await e.api("POST", `/sandboxes/${source}/snapshots`, { name: `late-${tag}` });
    expect([stopped.status, stopped.body.code]).toEqual([409, "sandbox_not_running"]);
    expect((await e.api("DELETE", `/snapshots/${s.body.id}`)).status).toBe(204);
    const gone = await e.api("GET", `/snapshots/${s.body.id}`);
    expect([gone.status, gone.body.code]).toEqual([404, "snapshot_not_found"]);
    expect((await e.api("DELETE", `/snapshots/${s.body.id}`)).status).toBe(404);
    const restore = await e.api("POST", "/sandboxes", { snapshot: "snap_00000000000000000000000000" });
    expect([restore.status, restore.body.code]).toEqual([404, "snapshot_not_found"]);
  });
});

describe("volumes", () => {
  it("201 with the volume shape; GET by id or name; PATCH grows and sets lifetimes; shrink is 409 cannot_shrink", async () => {
    const r = await e.api("POST", "/volumes", { name: `vol-${tag}`, size_gb: 1, max_lifetime_days: 30 });
    expect(r.status).toBe(201);
    volumes.push(r.body.id);
    expect(r.body).toMatchObject({
      name: `vol-${tag}`,
      size_gb: 1,
      size_mb: 0,
      attached_sandbox_id: null,
      max_lifetime_hours: 720,
    });
    expect(r.body.id).toMatch(/^vol_/);
    expect(["creating", "available"]).toContain(r.body.status);
    expect(r.body.expires_at).toMatch(ISO);
    expect(r.body.created_at).toMatch(ISO);
    expect((await e.api("GET", `/volumes/vol-${tag}`)).body.id).toBe(r.body.id);
    const list = await e.api("GET", "/volumes");
    expect(Array.isArray(list.body)).toBe(true);
    expect(list.body.map((x: { id: string }) => x.id)).toContain(r.body.id);
    const grown = await e.api("PATCH", `/volumes/${r.body.id}`, { size_gb: 2, max_lifetime_days: null });
    expect(grown.status).toBe(200);
    expect(grown.body).toMatchObject({ size_gb: 2, max_lifetime_hours: null, expires_at: null });
    const shrink = await e.api("PATCH", `/volumes/${r.body.id}`, { size_gb: 1 });
    expect([shrink.status, shrink.body.code]).toEqual([409, "cannot_shrink"]);
    const dup = await e.api("POST", "/volumes", { name: `vol-${tag}`, size_gb: 1 });
    expect([dup.status, dup.body.code]).toEqual([409, "volume_name_taken"]);
  });

  it("mounts at /persist for one sandbox at a time; delete waits for the holder; data survives it", async () => {
    const name = `persist-${tag}`;
    const first = await e.api("POST", "/sandboxes", { template: "python-3.12", volume: name });
    expect(first.status).toBe(201);
    sandboxes.push(first.body.id);
    expect(first.body.volume).toMatchObject({ name, mount_path: "/persist" });
    volumes.push(first.body.volume.id);
    await exec(e, first.body.id, "echo kept > /persist/k");
    const second = await e.api("POST", "/sandboxes", { template: "python-3.12", volume: name });
    expect([second.status, second.body.code]).toEqual([409, "volume_in_use"]);
    const del = await e.api("DELETE", `/volumes/${name}`);
    expect([del.status, del.body.code]).toEqual([409, "volume_in_use"]);
    const other = ["fsn1", "hel1", "rbx"].find((r) => r !== first.body.region)!;
    const pinned = await e.api("POST", "/sandboxes", { template: "python-3.12", volume: name, region: other });
    expect(pinned.status).toBeGreaterThanOrEqual(400);
    expect(pinned.status).toBeLessThan(500);

    expect((await e.api("DELETE", `/sandboxes/${first.body.id}`)).status).toBe(204);
    await until(
      "the volume to be detached",
      async () => {
        const x = await e.api("GET", `/volumes/${name}`);
        return x.body.status === "available" && x;
      },
      { timeout: 60_000, interval: 500 },
    );
    const next = await sandbox({ volume: name });
    expect((await exec(e, next, "cat /persist/k")).stdout).toBe("kept\n");
    await e.api("DELETE", `/sandboxes/${next}`);
  });

  it("moves a detached volume (202 moving, then available in the new region); 404 after delete", async () => {
    const r = await e.api("POST", "/volumes", { name: `mover-${tag}`, size_gb: 1, region: "fsn1" });
    volumes.push(r.body.id);
    const moving = await e.api("POST", `/volumes/${r.body.id}/move`, { region: "hel1" });
    expect(moving.status).toBe(202);
    expect(["moving", "available"]).toContain(moving.body.status);
    const done = await until(
      "the moved volume to be available",
      async () => {
        const x = await e.api("GET", `/volumes/${r.body.id}`);
        return x.body.status === "available" && x;
      },
      { timeout: 60_000, interval: 500 },
    );
    expect(done.body.region).toBe("hel1");
    expect((await e.api("DELETE", `/volumes/${r.body.id}`)).status).toBe(204);
    const gone = await e.api("GET", `/volumes/${r.body.id}`);
    expect([gone.status, gone.body.code]).toEqual([404, "volume_not_found"]);
  });

  it.runIf(!process.env.ORKESTR_API_URL)("engine: the size is enforced, and said so", async () => {
    const v = (await e.api("GET", `/volumes/vol-${tag}`)).body;
    expect(v.size_enforced).toBe(true);
  });
});
