import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SIZES } from "../src/plans.js";
import { startEngine, type EngineHandle } from "./helpers/engine.js";

/**
 * The warm pool against a real engine: what a claimed sandbox starts with, what another account
 * can see of it, what the pool counts, and what shutdown and a crash leave behind.
 */

const POOL = { ORKESTR_ENGINE_POOL_SIZE: "2", ORKESTR_ENGINE_POOL_TEMPLATES: "python-3.12" };
const RW = ["sandboxes:read", "sandboxes:write"];

async function poolReady(e: EngineHandle, n = 2): Promise<void> {
  const end = Date.now() + 60_000;
  for (;;) {
    const l = await e.api("GET", "/limits");
    if (l.body.warm_pool.ready === n) return;
    if (Date.now() > end) throw new Error(`pool never reached ${n} ready: ${JSON.stringify(l.body.warm_pool)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** How the sandbox started, from its own sandbox.created event. */
async function startOf(e: EngineHandle, id: string, token: string): Promise<string> {
  const ev = await e.api("GET", `/sandboxes/${id}/events`, undefined, { token });
  const created = (ev.body as { type: string; data: { start?: string } }[]).find((x) => x.type === "sandbox.created");
  return created?.data.start ?? "none";
}

function markers(e: EngineHandle): { key: string; uid: number; pid: number | null }[] {
  const dir = path.join(e.dataDir!, "engine", "pool");
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).map((f) => ({
    key: f.replace(/\.json$/, ""),
    ...(JSON.parse(fs.readFileSync(path.join(dir, f), "utf8")) as { uid: number; pid: number | null }),
  }));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("warm pool", () => {
  let e: EngineHandle;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    e = await startEngine({ env: POOL });
    alice = await e.mint(RW, { account: "pool-alice" });
    bob = await e.mint(RW, { account: "pool-bob" });
    await poolReady(e);
  }, 90_000);
  afterAll(async () => {
    await e?.stop();
  });

  it("pool members are counted by the machine and by no account", async () => {
    const l = await e.api("GET", "/limits", undefined, { token: alice });
    expect(l.body.warm_pool).toMatchObject({ size: 2, templates: ["python-3.12"], ready: 2 });
    expect(l.body.host_capacity.pooled_sandboxes).toBe(2);
    expect(l.body.host_capacity.memory_pooled_mb).toBe(2 * SIZES.small.memory_mb);
    expect(l.body.host_capacity.memory_committed_mb).toBeGreaterThanOrEqual(2 * SIZES.small.memory_mb);
    expect(l.body).toMatchObject({ running: 0, ram_used_mb: 0, trial_credit_used_eur: 0 });
    const list = await e.api("GET", "/sandboxes?status=creating,running,paused,failed", undefined, { token: alice });
    expect(list.body).toEqual([]);
    const usage = await e.api("GET", "/usage", undefined, { token: alice });
    expect(usage.body.totals).toMatchObject({ cpu_seconds: 0, gb_seconds: 0, sandboxes_created: 0 });
    expect(usage.body.by_sandbox).toEqual([]);
  });

  it("a claimed sandbox starts empty, with its own id, env and metadata, and nothing of another account's", async () => {
    const a = await e.api(
      "POST",
      "/sandboxes",
      { template: "python-3.12", env: { SECRET: "alice-secret" }, metadata: { owner: "alice" }, timeout_seconds: 600 },
      { token: alice },
    );
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ status: "running", metadata: { owner: "alice" }, timeout_seconds: 600 });
    expect(await startOf(e, a.body.id, alice)).toBe("warm");
    const first = await e.api(
      "POST",
      `/sandboxes/${a.body.id}/exec`,
      {
        command:
          'echo "$SECRET $ORKESTR_SANDBOX_ID"; ls -A /workspace /tmp; stat -c %u /workspace; ' +
          "echo alice-file > /workspace/alice.txt; echo alice-tmp > /tmp/alice.txt; " +
          "(nohup sleep 1000 >/dev/null 2>&1 &)",
      },
      { token: alice },
    );
    expect(first.body.stdout).toBe(`alice-secret ${a.body.id}\n/tmp:\n\n/workspace:\n1000\n`);

    // Bob's creates, while Alice's sandbox runs and after it is gone, are each a fresh pool member.
    const seen = new Set<string>([a.body.id]);
    for (const phase of ["while alice runs", "after alice terminated"]) {
      await poolReady(e);
      for (let i = 0; i < 2; i++) {
        const b = await e.api("POST", "/sandboxes", { template: "python-3.12" }, { token: bob });
        expect(b.status, phase).toBe(201);
        expect(seen.has(b.body.id), phase).toBe(false);
        seen.add(b.body.id);
        expect(await startOf(e, b.body.id, bob), phase).toBe("warm");
        const mine = await e.api(
          "POST",
          `/sandboxes/${b.body.id}/exec`,
          {
            command:
              'echo "[$SECRET]"; ls -A /workspace /tmp; ps -eo args | grep -c "[s]leep 1000"; env | grep -c alice',
          },
          { token: bob },
        );
        expect(mine.body.stdout, phase).toBe("[]\n/tmp:\n\n/workspace:\n0\n0\n");
        // Alice's sandbox is as unknown to Bob as one that never existed, and the other way round.
        expect((await e.api("GET", `/sandboxes/${a.body.id}`, undefined, { token: bob })).status).toBe(404);
        expect((await e.api("GET", `/sandboxes/${b.body.id}`, undefined, { token: alice })).status).toBe(404);
        await e.api("DELETE", `/sandboxes/${b.body.id}`, undefined, { token: bob });
      }
      if (phase === "while alice runs") {
        expect((await e.api("DELETE", `/sandboxes/${a.body.id}`, undefined, { token: alice })).status).toBe(204);
      }
    }
    const bobs = await e.api("GET", "/sandboxes?status=terminated", undefined, { token: bob });
    expect(bobs.body.map((s: { id: string }) => s.id)).not.toContain(a.body.id);
  }, 120_000);

  it("a claimed sandbox pauses, resumes, snapshots and forks like any other, and its files go with it", async () => {
    await poolReady(e);
    const id = (await e.api("POST", "/sandboxes", { template: "python-3.12" }, { token: alice })).body.id as string;
    expect(await startOf(e, id, alice)).toBe("warm");
    const run = (sid: string, command: string) =>
      e.api("POST", `/sandboxes/${sid}/exec`, { command }, { token: alice }).then((r) => r.body.stdout as string);
    await run(id, "echo kept > /workspace/kept.txt");
    // Found by its id too (a restarted engine looks there): a link to the member's directory.
    const link = path.join(e.dataDir!, "engine", "sbx", id);
    expect(path.basename(fs.readlinkSync(link))).toMatch(/^sbx_pool[0-9a-f]{24}$/);
    expect((await e.api("POST", `/sandboxes/${id}/pause`, undefined, { token: alice })).body.status).toBe("paused");
    expect((await e.api("POST", `/sandboxes/${id}/resume`, {}, { token: alice })).body.status).toBe("running");
    const snap = await e.api("POST", `/sandboxes/${id}/snapshots`, { name: "from-warm" }, { token: alice });
    expect(snap.status).toBe(201);
    const fork = await e.api("POST", "/sandboxes", { snapshot: snap.body.id }, { token: alice });
    expect(fork.status).toBe(201);
    // A fork brings a workspace: never served by the pool.
    expect(await startOf(e, fork.body.id, alice)).toBe("cold");
    expect(await run(fork.body.id, "cat /workspace/kept.txt")).toBe("kept\n");
    for (const sid of [fork.body.id, id]) await e.api("DELETE", `/sandboxes/${sid}`, undefined, { token: alice });
    await e.api("DELETE", `/snapshots/${snap.body.id}`, undefined, { token: alice });
    // Terminated: its directory (named by its pool key, not its id) is gone with it.
    await poolReady(e);
    expect(() => fs.lstatSync(link)).toThrow(/ENOENT/);
    const sbx = path.join(e.dataDir!, "engine", "sbx");
    const left = fs.readdirSync(sbx).filter((d) => d.startsWith("sbx_pool"));
    expect(left.sort()).toEqual(
      markers(e)
        .map((m) => m.key)
        .sort(),
    );
  }, 120_000);

  it("a create the pool cannot serve boots cold and leaves the pool alone", async () => {
    await poolReady(e);
    for (const body of [
      { template: "python-3.12", size: "medium" },
      { template: "python-3.12", network: "restricted" },
      { template: "debian-12" },
    ]) {
      const r = await e.api("POST", "/sandboxes", body, { token: alice });
      expect(r.status, JSON.stringify(body)).toBe(201);
      expect(await startOf(e, r.body.id, alice), JSON.stringify(body)).toBe("cold");
      expect((await e.api("GET", "/limits")).body.warm_pool.ready).toBe(2);
      await e.api("DELETE", `/sandboxes/${r.body.id}`, undefined, { token: alice });
    }
  }, 120_000);

  it("shutdown ends every pool member; a crashed engine's members are ended by the next one", async () => {
    await poolReady(e);
    const before = markers(e);
    expect(before).toHaveLength(2);
    expect(before.every((m) => m.pid !== null && alive(m.pid))).toBe(true);
    await e.stop();
    expect(markers(e)).toEqual([]);
    expect(before.filter((m) => alive(m.pid!))).toEqual([]);
    const sbx = path.join(e.dataDir!, "engine", "sbx");
    expect(fs.readdirSync(sbx).filter((d) => d.startsWith("sbx_pool"))).toEqual([]);

    // A crash leaves markers and directories; the next engine on the same data ends them first.
    e = await startEngine({ env: POOL, dataDir: e.dataDir! });
    await poolReady(e);
    const crashed = markers(e);
    // SIGKILL to the engine itself (its launcher would turn a kill of its own into a clean SIGTERM).
    process.kill(e.enginePid!, "SIGKILL");
    await e.stop();
    expect(markers(e)).toHaveLength(2);
    e = await startEngine({ env: POOL, dataDir: e.dataDir! });
    await poolReady(e);
    const now = markers(e);
    expect(now.map((m) => m.key)).not.toContain(crashed[0]!.key);
    expect(crashed.filter((m) => alive(m.pid!))).toEqual([]);
    const dirs = fs.readdirSync(sbx).filter((d) => d.startsWith("sbx_pool"));
    expect(dirs.sort()).toEqual(now.map((m) => m.key).sort());
  }, 180_000);
});

describe("warm pool on a full machine", () => {
  let e: EngineHandle;
  beforeAll(async () => {
    // Room for five small sandboxes' memory: the pool's two leave three, a medium needs four.
    e = await startEngine({
      env: { ...POOL, ORKESTR_ENGINE_HOST_MEMORY_MB: "5120", ORKESTR_ENGINE_MEMORY_RESERVE_MB: "0" },
    });
    await poolReady(e);
  }, 90_000);
  afterAll(async () => {
    await e?.stop();
  });

  it("gives way to customers: a create the machine is short for ends pool members, and refill waits for room", async () => {
    const before = await e.api("GET", "/limits");
    // Pooled memory is not taken from what an account may start.
    expect(before.body.effective_ram_budget_mb).toBe(Math.min(5120, before.body.ram_budget_mb));
    const medium = await e.api("POST", "/sandboxes", { template: "python-3.12", size: "medium" });
    expect(medium.status).toBe(201);
    expect(await startOf(e, medium.body.id, e.token)).toBe("cold");
    let l = await e.api("GET", "/limits");
    expect(l.body.host_capacity.pooled_sandboxes).toBe(1);
    // The last member is still claimed; after it the machine is full and the pool holds nothing.
    const small = await e.api("POST", "/sandboxes", { template: "python-3.12" });
    expect(small.status).toBe(201);
    expect(await startOf(e, small.body.id, e.token)).toBe("warm");
    const refused = await e.api("POST", "/sandboxes", { template: "python-3.12" });
    expect(refused.status).toBe(503);
    expect(refused.body.code).toBe("fleet_full");
    l = await e.api("GET", "/limits");
    expect(l.body.host_capacity.pooled_sandboxes).toBe(0);
    // Room again: the pool fills back up on its own.
    await e.api("DELETE", `/sandboxes/${medium.body.id}`);
    await e.api("DELETE", `/sandboxes/${small.body.id}`);
    await poolReady(e);
  }, 120_000);
});
