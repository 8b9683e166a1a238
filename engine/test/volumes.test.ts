import Database from "better-sqlite3";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, exec, startEngine, type EngineHandle } from "./helpers/engine.js";
import { eventually, until } from "./helpers/async.js";

/**
 * Volumes (/v1/volumes, with seed 003's corrections) against a real engine: per-volume ext4
 * images, loop-mounted at /persist (engine-only). Test knobs: one "GB" is 32 MiB here, an hour of
 * max_lifetime lasts 3 s and the expiry sweep runs every 200 ms.
 */
const UNIT_MB = 32;
const HOUR_MS = 3000;
let e: EngineHandle;
let dataDir: string;
const image = (region: string, id: string) => path.join(dataDir, "engine", "volumes", "images", region, `${id}.img`);
const loopsFor = (dir: string) =>
  execFileSync("losetup", ["-a"], { encoding: "utf8" })
    .split("\n")
    .filter((l) => l.includes(dir));

/** Volume events have no sandbox, so they are read from the engine's own event table. */
function volumeEvents(dir: string, type: string): { data: Record<string, unknown> }[] {
  const db = new Database(path.join(dir, "engine", "engine.sqlite"), { readonly: true, fileMustExist: true });
  try {
    return (
      db.prepare("SELECT data FROM events WHERE type = ? AND sandbox_id IS NULL ORDER BY seq").all(type) as {
        data: string;
      }[]
    ).map((r) => ({ data: JSON.parse(r.data) }));
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  dataDir = fs.mkdtempSync("/var/tmp/baton-volumes-test-");
  e = await startEngine({
    dataDir,
    env: {
      ORKESTR_ENGINE_VOLUME_UNIT_MB: String(UNIT_MB),
      ORKESTR_ENGINE_VOLUME_HOUR_MS: String(HOUR_MS),
      ORKESTR_ENGINE_VOLUME_SWEEP_MS: "200",
    },
  });
});
afterAll(async () => {
  await e?.stop();
  if (dataDir) {
    expect(loopsFor(dataDir)).toEqual([]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

describe("/persist", () => {
  it("is created on first reference, owned by the sandbox user, and survives terminate into a new sandbox", async () => {
    const first = await e.api("POST", "/sandboxes", { template: "python-3.12", volume: "my-cache" });
    expect(first.status).toBe(201);
    expect(first.body.volume).toMatchObject({ name: "my-cache", mount_path: "/persist" });
    const volId = first.body.volume.id as string;
    expect(volId).toMatch(/^vol_/);
    const v = (await e.api("GET", "/volumes/my-cache")).body;
    expect(v).toMatchObject({
      id: volId,
      size_gb: 10,
      status: "attached",
      region: "fsn1",
      attached_sandbox_id: first.body.id,
      size_enforced: true,
    });
    expect(
      await exec(
        e,
        first.body.id,
        "stat -c '%U %a' /persist && echo trained-weights-v1 > /persist/model.txt && head -c 3000000 /dev/urandom > /persist/blob",
      ),
    ).toMatchObject({ exit_code: 0, stdout: "user 700\n" });
    expect(loopsFor(dataDir)).toHaveLength(1);
    // The file API reaches /persist as well.
    const read = await e.api(
      "GET",
      `/sandboxes/${first.body.id}/files?path=${encodeURIComponent("/persist/model.txt")}`,
    );
    expect(Buffer.from(read.body.content, "base64").toString()).toBe("trained-weights-v1\n");

    expect((await e.api("DELETE", `/sandboxes/${first.body.id}`)).status).toBe(204);
    const detached = (await e.api("GET", `/volumes/${volId}`)).body;
    expect(detached).toMatchObject({ status: "available", attached_sandbox_id: null });
    expect(detached.size_mb).toBeGreaterThanOrEqual(3);
    expect(loopsFor(dataDir)).toEqual([]);
    // The terminated sandbox still says which volume it had.
    expect((await e.api("GET", `/sandboxes/${first.body.id}`)).body.volume.id).toBe(volId);

    // A sandbox in between takes the first uid, so the next holder runs as another host uid.
    const filler = await createSandbox(e);
    const second = await e.api("POST", "/sandboxes", { template: "python-3.12", volume: volId });
    expect(second.status).toBe(201);
    expect(
      (
        await exec(
          e,
          second.body.id,
          "cat /persist/model.txt && echo more >> /persist/model.txt && stat -c %U /persist/blob",
        )
      ).stdout,
    ).toBe("trained-weights-v1\nuser\n");
    for (const id of [filler, second.body.id]) await e.api("DELETE", `/sandboxes/${id}`);
  });

  it("a write past the volume's size fails inside the sandbox", async () => {
    const created = await e.api("POST", "/volumes", { name: "tiny", size_gb: 1 });
    expect(created.status).toBe(201);
    const id = await createSandbox(e, { volume: "tiny" });
    const r = await exec(
      e,
      id,
      `head -c ${(UNIT_MB + 8) * 1024 * 1024} /dev/zero > /persist/fill; echo rc=$?; df -m /persist | tail -1`,
    );
    expect(r.stderr).toMatch(/No space left on device/);
    expect(r.stdout).toMatch(/rc=1/);
    const used = (await e.api("GET", "/volumes/tiny")).body.size_mb;
    expect(used).toBeGreaterThan(UNIT_MB / 2);
    expect(used).toBeLessThanOrEqual(UNIT_MB);
    await e.api("DELETE", `/sandboxes/${id}`);
    expect((await e.api("DELETE", "/volumes/tiny")).status).toBe(204);
  });
});

describe("one holder", () => {
  it("409 volume_in_use for a second sandbox, also while the holder is paused; delete, move and resize wait", async () => {
    expect((await e.api("POST", "/volumes", { name: "held", size_gb: 1 })).status).toBe(201);
    const holder = await createSandbox(e, { volume: "held" });
    const second = await e.api("POST", "/sandboxes", { template: "python-3.12", volume: "held" });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ code: "volume_in_use", attached_sandbox_id: holder });
    expect((await e.api("POST", `/sandboxes/${holder}/pause`)).status).toBe(200);
    expect((await e.api("POST", "/sandboxes", { template: "python-3.12", volume: "held" })).body.code).toBe(
      "volume_in_use",
    );
    const del = await e.api("DELETE", "/volumes/held");
    expect(del.status).toBe(409);
    expect(del.body.code).toBe("volume_in_use");
    expect((await e.api("POST", "/volumes/held/move", { region: "hel1" })).body.code).toBe("volume_in_use");
    expect((await e.api("PATCH", "/volumes/held", { size_gb: 2 })).body.code).toBe("volume_in_use");
    expect((await e.api("POST", `/sandboxes/${holder}/resume`)).status).toBe(200);
    expect((await e.api("DELETE", `/sandboxes/${holder}`)).status).toBe(204);
    const v = (await e.api("GET", "/volumes/held")).body;
    expect(fs.existsSync(image("fsn1", v.id))).toBe(true);
    expect((await e.api("DELETE", "/volumes/held")).status).toBe(204);
    expect(fs.existsSync(image("fsn1", v.id))).toBe(false);
    expect((await e.api("GET", "/volumes/held")).body.code).toBe("volume_not_found");
    expect(volumeEvents(dataDir, "volume.deleted").some((x) => (x.data.volume as { id: string }).id === v.id)).toBe(
      true,
    );
  });
});

describe("races", () => {
  it("two creates naming the same new volume at once: one holds it, the other gets 409 volume_in_use", async () => {
    const body = { template: "python-3.12", volume: "raced" };
    const results = await Promise.all([e.api("POST", "/sandboxes", body), e.api("POST", "/sandboxes", body)]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    expect(results.find((r) => r.status === 409)!.body.code).toBe("volume_in_use");
    const winner = results.find((r) => r.status === 201)!.body;
    expect((await e.api("GET", "/volumes/raced")).body.attached_sandbox_id).toBe(winner.id);
    await e.api("DELETE", `/sandboxes/${winner.id}`);
    expect((await e.api("DELETE", "/volumes/raced")).status).toBe(204);
  });
});

describe("regions", () => {
  it("a volume pins its sandbox's region; a mismatch is 400; a detached volume moves", async () => {
    const v = (await e.api("POST", "/volumes", { name: "roamer", size_gb: 1, region: "rbx" })).body;
    expect(v.region).toBe("rbx");
    const mismatch = await e.api("POST", "/sandboxes", { template: "python-3.12", volume: "roamer", region: "hel1" });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body).toMatchObject({ code: "volume_region_mismatch", volume_region: "rbx" });
    const sbx = await e.api("POST", "/sandboxes", { template: "python-3.12", volume: "roamer" });
    expect(sbx.body.region).toBe("rbx");
    await exec(e, sbx.body.id, "echo travelled > /persist/t");
    await e.api("DELETE", `/sandboxes/${sbx.body.id}`);

    expect((await e.api("POST", "/volumes/roamer/move", { region: "mars" })).body.code).toBe("region_unavailable");
    const moving = await e.api("POST", "/volumes/roamer/move", { region: "hel1" });
    expect(moving.status).toBe(202);
    expect(moving.body).toMatchObject({ status: "moving", region: "rbx" });
    const moved = await until(
      "the moved volume to be available",
      async () => {
        const r = await e.api("GET", `/volumes/${v.id}`);
        return r.body.status === "available" && r;
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(moved.body.region).toBe("hel1");
    expect(fs.existsSync(image("hel1", v.id))).toBe(true);
    expect(fs.existsSync(image("rbx", v.id))).toBe(false);
    const ev = volumeEvents(dataDir, "volume.moved").find((x) => (x.data.volume as { id: string }).id === v.id);
    expect(ev?.data).toMatchObject({ from_region: "rbx", to_region: "hel1" });
    const after = await e.api("POST", "/sandboxes", { template: "python-3.12", volume: v.id });
    expect(after.body.region).toBe("hel1");
    expect((await exec(e, after.body.id, "cat /persist/t")).stdout).toBe("travelled\n");
    await e.api("DELETE", `/sandboxes/${after.body.id}`);
    await e.api("DELETE", `/volumes/${v.id}`);
  });
});

describe("management", () => {
  it("validates create, and PATCH renames, grows only, and sets and clears lifetimes", async () => {
    for (const bad of [
      { name: "x", size_gb: 0 },
      { name: "x", size_gb: 101 },
      { name: "vol_x" },
      { name: "x", max_lifetime_hours: 25 },
      { name: "x", max_lifetime_hours: 2, max_lifetime_days: 1 },
      {},
    ]) {
      const r = await e.api("POST", "/volumes", bad);
      expect(r.status, JSON.stringify(bad)).toBe(422);
    }
    const v = (await e.api("POST", "/volumes", { name: "editable", size_gb: 1, max_lifetime_days: 30 })).body;
    expect(v).toMatchObject({
      size_gb: 1,
      size_mb: 0,
      status: "available",
      max_lifetime_hours: 720,
      max_lifetime_days: 30,
    });
    expect(Date.parse(v.expires_at) - Date.parse(v.created_at)).toBe(720 * HOUR_MS);
    expect((await e.api("POST", "/volumes", { name: "editable" })).body.code).toBe("volume_name_taken");
    await e.api("POST", "/volumes", { name: "other", size_gb: 1 });
    expect((await e.api("PATCH", "/volumes/editable", { name: "other" })).body.code).toBe("volume_name_taken");

    const shrink = await e.api("PATCH", "/volumes/editable", { size_gb: 1, name: "renamed" });
    expect(shrink.body).toMatchObject({ name: "renamed", size_gb: 1 });
    const grown = await e.api("PATCH", "/volumes/renamed", { size_gb: 3 });
    expect(grown.status).toBe(200);
    expect(grown.body.size_gb).toBe(3);
    const no = await e.api("PATCH", "/volumes/renamed", { size_gb: 2 });
    expect(no.status).toBe(409);
    expect(no.body.code).toBe("cannot_shrink");
    // The grown filesystem really is bigger.
    const id = await createSandbox(e, { volume: "renamed" });
    const df = Number((await exec(e, id, "df -m --output=size /persist | tail -1")).stdout.trim());
    expect(df).toBeGreaterThan(2 * UNIT_MB);
    await e.api("DELETE", `/sandboxes/${id}`);

    const hours = (await e.api("PATCH", "/volumes/renamed", { max_lifetime_hours: 6 })).body;
    expect(hours).toMatchObject({ max_lifetime_hours: 6, max_lifetime_days: null });
    const kept = (await e.api("PATCH", "/volumes/renamed", { max_lifetime_hours: null })).body;
    expect(kept).toMatchObject({ max_lifetime_hours: null, max_lifetime_days: null, expires_at: null });
    const list = await e.api("GET", "/volumes?status=available&limit=1");
    expect(list.body).toHaveLength(1);
    expect(list.headers.get("x-next-cursor")).toBeTruthy();
    expect(
      (await e.api("GET", "/volumes?region=hel1")).body.every((x: { region: string }) => x.region === "hel1"),
    ).toBe(true);
    for (const name of ["renamed", "other"]) expect((await e.api("DELETE", `/volumes/${name}`)).status).toBe(204);
    expect((await e.api("DELETE", "/volumes/other")).status).toBe(404);
  });

  it("the engine deletes a volume past its lifetime, but only once no sandbox holds it", async () => {
    const loose = (await e.api("POST", "/volumes", { name: "ephemeral", size_gb: 1, max_lifetime_hours: 1 })).body;
    expect(
      (await e.api("POST", "/volumes", { name: "held-past-deadline", size_gb: 1, max_lifetime_hours: 1 })).status,
    ).toBe(201);
    const holder = await createSandbox(e, { volume: "held-past-deadline" });
    await exec(e, holder, "echo still-here > /persist/x");
    const gone = await until(
      "the expired volume to be deleted",
      async () => {
        const r = await e.api("GET", `/volumes/${loose.id}`);
        return r.status === 404 && r;
      },
      { timeout: HOUR_MS * 4, interval: 100 },
    );
    expect(gone.status).toBe(404);
    // The row goes first (no create can attach it meanwhile); its image follows (sweepExpired).
    await eventually(() => expect(fs.existsSync(image("fsn1", loose.id))).toBe(false), { timeout: 10_000 });
    const deleted = volumeEvents(dataDir, "volume.deleted").find(
      (x) => (x.data.volume as { id: string }).id === loose.id,
    );
    expect(deleted?.data.reason).toBe("max_lifetime");
    // Past its deadline but held: it stays, and the sandbox keeps its data.
    const held = (await e.api("GET", "/volumes/held-past-deadline")).body;
    expect(held.status).toBe("attached");
    expect(Date.parse(held.expires_at)).toBeLessThan(Date.now());
    expect((await exec(e, holder, "cat /persist/x")).stdout).toBe("still-here\n");
    await e.api("DELETE", `/sandboxes/${holder}`);
    expect(
      (
        await until(
          "the held volume to be deleted once released",
          async () => {
            const r = await e.api("GET", "/volumes/held-past-deadline");
            return r.status === 404 && r;
          },
          { timeout: 5000, interval: 100 },
        )
      ).status,
    ).toBe(404);
  });
});

describe("plan caps", () => {
  it("free: one volume of at most 10 GB (403 plan_limit); limits report the caps", async () => {
    const free = await startEngine({ env: { ORKESTR_ENGINE_PLAN: "free", ORKESTR_ENGINE_VOLUME_UNIT_MB: "8" } });
    try {
      expect((await free.api("GET", "/sandboxes/limits")).body).toMatchObject({
        max_volumes: 1,
        max_volume_gb: 10,
        volumes: 0,
        default_volume_size_gb: 10,
        volume_size_enforced: true,
      });
      const big = await free.api("POST", "/volumes", { name: "big", size_gb: 20 });
      expect(big.status).toBe(403);
      expect(big.body).toMatchObject({ code: "plan_limit", max_volume_gb: 10 });
      expect((await free.api("POST", "/volumes", { name: "one", size_gb: 10 })).status).toBe(201);
      const second = await free.api("POST", "/volumes", { name: "two", size_gb: 1 });
      expect(second.body).toMatchObject({ code: "plan_limit", max_volumes: 1 });
      // Created on first reference counts the same.
      expect((await free.api("POST", "/sandboxes", { template: "python-3.12", volume: "three" })).body.code).toBe(
        "plan_limit",
      );
      expect((await free.api("PATCH", "/volumes/one", { size_gb: 11 })).body.code).toBe("plan_limit");
    } finally {
      await free.stop();
    }
  });
});

describe("restart", () => {
  it("volumes and their data survive a restart; shutdown leaves no mount or loop device", async () => {
    const dir = fs.mkdtempSync("/var/tmp/baton-volumes-restart-");
    const env = {
      ORKESTR_ENGINE_VOLUME_UNIT_MB: "16",
      ORKESTR_ENGINE_UID_BASE: String(4_000_000 + (process.pid % 100) * 10_000),
    };
    const first = await startEngine({ dataDir: dir, env });
    let volId: string;
    try {
      const sbx = await first.api("POST", "/sandboxes", { template: "python-3.12", volume: "durable" });
      volId = sbx.body.volume.id;
      await exec(first, sbx.body.id, "echo across-restarts > /persist/r");
      const paused = await first.api("POST", "/sandboxes", { template: "python-3.12", volume: "paused-at-shutdown" });
      await first.api("POST", `/sandboxes/${paused.body.id}/pause`);
      expect(loopsFor(dir)).toHaveLength(2);
    } finally {
      expect(await first.stop()).toBe(0);
    }
    expect(loopsFor(dir)).toEqual([]);
    expect(fs.readFileSync("/proc/self/mounts", "utf8")).not.toContain(dir);
    const second = await startEngine({ dataDir: dir, env });
    try {
      const v = (await second.api("GET", "/volumes/durable")).body;
      expect(v).toMatchObject({ id: volId, status: "available", attached_sandbox_id: null });
      expect((await second.api("GET", "/volumes/paused-at-shutdown")).body.status).toBe("available");
      const sbx = await second.api("POST", "/sandboxes", { template: "python-3.12", volume: "durable" });
      expect(sbx.status).toBe(201);
      expect((await exec(second, sbx.body.id, "cat /persist/r")).stdout).toBe("across-restarts\n");
    } finally {
      await second.stop();
      expect(loopsFor(dir)).toEqual([]);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
