import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, exec, startEngine, type EngineHandle } from "./helpers/engine.js";

/**
 * Named snapshots and forks (POST /v1/sandboxes/:id/snapshots, POST /v1/sandboxes with `snapshot`) against a real engine: real copies of real sandboxes'
 * files, children that really diverge, files on disk that really go away (engine-only).
 */
let e: EngineHandle;
let dataDir: string;
const snapDir = (id: string) => path.join(dataDir, "engine", "snapshots", id);

beforeAll(async () => {
  dataDir = fs.mkdtempSync("/var/tmp/baton-snapshots-test-");
  e = await startEngine({ dataDir });
});
afterAll(async () => {
  await e?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

describe("fork", () => {
  it("children boot from a snapshot and diverge: no write is seen by a sibling or the source", async () => {
    const source = await createSandbox(e, { metadata: { role: "source" } });
    await exec(
      e,
      source,
      "mkdir -p /workspace/app && echo ready > /workspace/state && echo scratch > /tmp/t && ln -s /etc/passwd /workspace/app/link && mkfifo /tmp/fifo",
    );
    const snap = await e.api("POST", `/sandboxes/${source}/snapshots`, { name: "warmed" });
    expect(snap.status).toBe(201);
    expect(snap.body).toMatchObject({
      name: "warmed",
      sandbox_id: source,
      template: "python-3.12",
      region: "fsn1",
      status: "ready",
      memory_captured: false,
    });
    expect(snap.body.id).toMatch(/^snap_[0-9A-Z]{26}$/);
    expect(typeof snap.body.size_mb).toBe("number");
    // The source keeps running.
    expect((await e.api("GET", `/sandboxes/${source}`)).body.status).toBe("running");

    const a = await e.api("POST", "/sandboxes", { snapshot: snap.body.id });
    const b = await e.api("POST", "/sandboxes", { snapshot: "warmed" });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    for (const child of [a.body, b.body]) {
      expect(child).toMatchObject({
        status: "running",
        template: "python-3.12",
        snapshot: snap.body.id,
        region: "fsn1",
        size: "small",
      });
      const seen = await exec(
        e,
        child.id,
        "cat /workspace/state /tmp/t; readlink /workspace/app/link; test -p /tmp/fifo && echo fifo; stat -c %U /workspace/state; touch /workspace/w && echo writable",
      );
      expect(seen.stdout).toBe("ready\nscratch\n/etc/passwd\nfifo\nuser\nwritable\n");
    }
    expect((await e.api("GET", `/sandboxes/${source}`)).body.snapshot).toBeNull();

    await exec(e, a.body.id, "echo from-a > /workspace/state && echo a > /workspace/only-a");
    await exec(e, b.body.id, "echo from-b > /workspace/state && rm /tmp/t");
    await exec(e, source, "echo from-source > /workspace/state");
    expect((await exec(e, a.body.id, "cat /workspace/state /tmp/t; ls /workspace")).stdout).toBe(
      "from-a\nscratch\napp\nonly-a\nstate\nw\n",
    );
    expect((await exec(e, b.body.id, "cat /workspace/state; ls /tmp /workspace")).stdout).toBe(
      "from-b\n/tmp:\nfifo\n\n/workspace:\napp\nstate\nw\n",
    );
    expect((await exec(e, source, "cat /workspace/state /tmp/t; ls /workspace")).stdout).toBe(
      "from-source\nscratch\napp\nstate\n",
    );

    const timeline = (await e.api("GET", `/sandboxes/${source}/events?type=snapshot.created`)).body;
    expect(timeline).toHaveLength(1);
    expect(timeline[0].data.snapshot.id).toBe(snap.body.id);
    const born = (await e.api("GET", `/sandboxes/${a.body.id}/events?type=sandbox.created`)).body;
    expect(born[0].data.snapshot_id).toBe(snap.body.id);
  });

  it("a child may pick its own size, not another template or region", async () => {
    const source = await createSandbox(e);
    await exec(e, source, "echo x > /workspace/x");
    const snap = (await e.api("POST", `/sandboxes/${source}/snapshots`, { name: "sized" })).body;
    const medium = await e.api("POST", "/sandboxes", { snapshot: snap.id, size: "medium" });
    expect(medium.status).toBe(201);
    expect(medium.body.size).toBe("medium");
    expect((await exec(e, medium.body.id, "cat /workspace/x")).stdout).toBe("x\n");
    const region = await e.api("POST", "/sandboxes", { snapshot: snap.id, region: "hel1" });
    expect(region.status).toBe(409);
    expect(region.body).toMatchObject({ code: "snapshot_region_mismatch", snapshot_region: "fsn1" });
    const template = await e.api("POST", "/sandboxes", { snapshot: snap.id, template: "node-22" });
    expect(template.status).toBe(400);
    expect((await e.api("POST", "/sandboxes", { snapshot: "snap_01NOPE0000000000000000000" })).body.code).toBe(
      "snapshot_not_found",
    );
    expect((await e.api("POST", "/sandboxes", { snapshot: "no-such-name" })).status).toBe(404);
    await e.api("DELETE", `/sandboxes/${medium.body.id}`);
    expect((await e.api("DELETE", `/snapshots/${snap.id}`)).status).toBe(204);
  });

  it("50 MB: snapshot and fork times (printed)", async () => {
    const source = await createSandbox(e);
    await exec(
      e,
      source,
      "head -c 30000000 /dev/urandom > /workspace/big && mkdir /workspace/many && cd /workspace/many && for i in $(seq 1 2000); do head -c 10240 /dev/urandom > f$i; done",
    );
    let t = performance.now();
    const snap = await e.api("POST", `/sandboxes/${source}/snapshots`, { name: "fifty" });
    const snapMs = performance.now() - t;
    expect(snap.status).toBe(201);
    expect(snap.body.size_mb).toBeGreaterThanOrEqual(48);
    t = performance.now();
    const child = await e.api("POST", "/sandboxes", { snapshot: snap.body.id });
    const forkMs = performance.now() - t;
    expect(child.status).toBe(201);
    expect((await exec(e, child.body.id, "ls /workspace/many | wc -l; stat -c %s /workspace/big")).stdout).toBe(
      "2000\n30000000\n",
    );
    console.log(
      `[measure] snapshot of ${snap.body.size_mb} MB: ${Math.round(snapMs)} ms request, ${snap.body.frozen_ms} ms frozen; fork (create incl. boot): ${Math.round(forkMs)} ms`,
    );
    for (const id of [source, child.body.id]) await e.api("DELETE", `/sandboxes/${id}`);
    await e.api("DELETE", `/snapshots/${snap.body.id}`);
  });
});

describe("rules", () => {
  it("refuses a taken name, a paused or terminated source, and bad names", async () => {
    const id = await createSandbox(e);
    expect((await e.api("POST", `/sandboxes/${id}/snapshots`, { name: "once" })).status).toBe(201);
    const again = await e.api("POST", `/sandboxes/${id}/snapshots`, { name: "once" });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("snapshot_name_taken");
    for (const name of ["", "snap_lookalike", "has space", "-dash-first"]) {
      expect((await e.api("POST", `/sandboxes/${id}/snapshots`, { name })).status).toBe(422);
    }
    expect((await e.api("POST", `/sandboxes/${id}/snapshots`, {})).status).toBe(422);
    // Two at once with one name: exactly one wins.
    const both = await Promise.all([1, 2].map(() => e.api("POST", `/sandboxes/${id}/snapshots`, { name: "twin" })));
    expect(both.map((r) => r.status).sort()).toEqual([201, 409]);
    expect((await e.api("DELETE", "/snapshots/twin")).status).toBe(204);

    expect((await e.api("POST", `/sandboxes/${id}/pause`)).status).toBe(200);
    const paused = await e.api("POST", `/sandboxes/${id}/snapshots`, { name: "while-paused" });
    expect(paused.status).toBe(409);
    expect(paused.body.code).toBe("sandbox_not_running");
    // Pause semantics are untouched: resume brings the same sandbox back.
    expect((await e.api("POST", `/sandboxes/${id}/resume`)).body.status).toBe("running");
    await e.api("DELETE", `/sandboxes/${id}`);
    expect((await e.api("POST", `/sandboxes/${id}/snapshots`, { name: "after-terminate" })).body.code).toBe(
      "sandbox_not_running",
    );
    expect((await e.api("POST", `/sandboxes/sbx_01NOPE0000000000000000000/snapshots`, { name: "x" })).body.code).toBe(
      "sandbox_not_found",
    );
    expect((await e.api("DELETE", "/snapshots/once")).status).toBe(204);
  });

  it("lists newest first with paging and a sandbox filter; gets by id or name; deletes from disk", async () => {
    const [s1, s2] = await Promise.all([createSandbox(e), createSandbox(e)]);
    const p = (await e.api("POST", `/sandboxes/${s1}/snapshots`, { name: "list-1" })).body;
    const q = (await e.api("POST", `/sandboxes/${s1}/snapshots`, { name: "list-2" })).body;
    const r = (await e.api("POST", `/sandboxes/${s2}/snapshots`, { name: "list-3" })).body;
    const mine = await e.api("GET", `/snapshots?sandbox_id=${s1}`);
    expect(mine.body.map((x: { id: string }) => x.id)).toEqual([q.id, p.id]);
    expect((await e.api("GET", `/sandboxes/${s1}/snapshots`)).body.map((x: { id: string }) => x.id)).toEqual([
      q.id,
      p.id,
    ]);
    const page1 = await e.api("GET", "/snapshots?limit=1");
    expect(page1.body.map((x: { id: string }) => x.id)).toEqual([r.id]);
    const cursor = page1.headers.get("x-next-cursor");
    expect(cursor).toBe(r.id);
    const page2 = await e.api("GET", `/snapshots?limit=1&cursor=${cursor}`);
    expect(page2.body[0].id).toBe(q.id);
    expect((await e.api("GET", `/snapshots/${p.id}`)).body.name).toBe("list-1");
    expect((await e.api("GET", "/snapshots/list-1")).body.id).toBe(p.id);

    // Owner-only on disk: the engine's (root's) alone; others may not even list the snapshots.
    expect(fs.statSync(path.join(dataDir, "engine", "snapshots")).mode & 0o777).toBe(0o711);
    const st = fs.statSync(snapDir(p.id));
    expect([st.mode & 0o777, st.uid]).toEqual([0o700, 0]);
    expect((await e.api("DELETE", `/snapshots/${p.id}`)).status).toBe(204);
    expect(fs.existsSync(snapDir(p.id))).toBe(false);
    const gone = await e.api("GET", `/snapshots/${p.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.code).toBe("snapshot_not_found");
    expect((await e.api("DELETE", `/snapshots/${p.id}`)).status).toBe(404);
    for (const x of [q, r]) await e.api("DELETE", `/snapshots/${x.id}`);
    for (const x of [s1, s2]) await e.api("DELETE", `/sandboxes/${x}`);
  });

  it("a child outlives its snapshot's deletion", async () => {
    const source = await createSandbox(e);
    await exec(e, source, "echo kept > /workspace/k");
    const snap = (await e.api("POST", `/sandboxes/${source}/snapshots`, { name: "short-lived" })).body;
    const child = (await e.api("POST", "/sandboxes", { snapshot: snap.id })).body;
    expect((await e.api("DELETE", `/snapshots/${snap.id}`)).status).toBe(204);
    expect((await exec(e, child.id, "cat /workspace/k")).stdout).toBe("kept\n");
    expect((await e.api("GET", `/sandboxes/${child.id}`)).body.snapshot).toBe(snap.id);
    expect((await e.api("POST", "/sandboxes", { snapshot: snap.id })).status).toBe(404);
  });
});

describe("restart", () => {
  it("snapshots survive an engine restart and still fork", async () => {
    const dir = fs.mkdtempSync("/var/tmp/baton-snapshots-restart-");
    const uidBase = String(3_000_000 + (process.pid % 100) * 10_000);
    const first = await startEngine({ dataDir: dir, env: { ORKESTR_ENGINE_UID_BASE: uidBase } });
    let snapId: string;
    try {
      const id = await createSandbox(first);
      await exec(first, id, "echo survived > /workspace/s");
      snapId = (await first.api("POST", `/sandboxes/${id}/snapshots`, { name: "durable" })).body.id;
    } finally {
      expect(await first.stop()).toBe(0);
    }
    const second = await startEngine({ dataDir: dir, env: { ORKESTR_ENGINE_UID_BASE: uidBase } });
    try {
      expect((await second.api("GET", "/snapshots/durable")).body).toMatchObject({ id: snapId, status: "ready" });
      const child = await second.api("POST", "/sandboxes", { snapshot: "durable" });
      expect(child.status).toBe(201);
      expect((await exec(second, child.body.id, "cat /workspace/s")).stdout).toBe("survived\n");
    } finally {
      await second.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("plan cap", () => {
  it("free keeps one named snapshot: the second is 409 snapshot_cap_reached until one is deleted", async () => {
    const free = await startEngine({ env: { ORKESTR_ENGINE_PLAN: "free" } });
    try {
      expect((await free.api("GET", "/sandboxes/limits")).body).toMatchObject({
        max_named_snapshots: 1,
        named_snapshots: 0,
        snapshots_include_memory: false,
      });
      const id = await createSandbox(free);
      expect((await free.api("POST", `/sandboxes/${id}/snapshots`, { name: "first" })).status).toBe(201);
      const capped = await free.api("POST", `/sandboxes/${id}/snapshots`, { name: "second" });
      expect(capped.status).toBe(409);
      expect(capped.body).toMatchObject({ code: "snapshot_cap_reached", max_named_snapshots: 1 });
      expect((await free.api("GET", "/limits")).body.named_snapshots).toBe(1);
      expect((await free.api("DELETE", "/snapshots/first")).status).toBe(204);
      expect((await free.api("POST", `/sandboxes/${id}/snapshots`, { name: "second" })).status).toBe(201);
    } finally {
      await free.stop();
    }
  });
});
