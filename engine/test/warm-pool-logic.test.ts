import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { SandboxCgroup } from "../src/runtime/cgroups.js";
import { SandboxMeter } from "../src/services/metrics.js";
import {
  MAX_WAIT_MS,
  QUIET_MS,
  RETRY_MS,
  WarmPool,
  type PoolDeps,
  type PoolMember,
} from "../src/services/warm-pool.js";

/**
 * The pool's bookkeeping with stand-in members (no process): who gets a member, when refill runs,
 * what admission sees, what drain leaves. The real boot is covered by warm-pool.test.ts.
 */

interface FakeProc {
  exited: boolean;
  targetPid: number;
  cgroup: { taskCount(): number };
  onExit(l: (reason: string) => void): void;
  die(): void;
}

function fakeProc(pid: number): FakeProc {
  const listeners: ((reason: string) => void)[] = [];
  return {
    exited: false,
    targetPid: pid,
    cgroup: { taskCount: () => 2 },
    onExit: (l) => listeners.push(l),
    die() {
      this.exited = true;
      for (const l of listeners) l("killed");
    },
  };
}

function harness(opts: { size?: number; templates?: string[] } = {}) {
  let nextUid = 5000;
  let nextPid = 100;
  const booted: PoolMember[] = [];
  const destroyed: string[] = [];
  const remembered = new Map<string, number | null>();
  const state = { room: true, failBoot: false, pendingBoots: [] as (() => void)[], holdBoots: false, attempts: 0 };
  const deps: PoolDeps = {
    async boot(spec) {
      state.attempts++;
      if (state.holdBoots) await new Promise<void>((r) => state.pendingBoots.push(r));
      if (state.failBoot) throw new Error("bwrap said no");
      const m = {
        key: spec.key,
        uid: spec.uid,
        templateId: spec.templateId,
        proc: fakeProc(nextPid++),
        network: { mode: "off" as const, close: async () => undefined },
      } as unknown as PoolMember;
      booted.push(m);
      return m;
    },
    async destroy(m) {
      destroyed.push(m.key);
    },
    allocateUid: () => nextUid++,
    hasRoom: () => state.room,
    remember: (key, _uid, pid) => void remembered.set(key, pid),
    forget: (key) => void remembered.delete(key),
    log: () => undefined,
  };
  const pool = new WarmPool(opts.size ?? 2, opts.templates ?? ["python-3.12"], 1024, deps);
  return { pool, booted, destroyed, remembered, state };
}

/** Runs timers and the promise callbacks they release until nothing is left to do right now. */
async function settle(ms = QUIET_MS * 4): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
}

describe("warm pool bookkeeping", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setImmediate", "performance"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("fills to its size per template, hands each member out once, and refills", async () => {
    const { pool, booted, remembered } = harness({ templates: ["python-3.12", "node-22"] });
    pool.start();
    await settle();
    expect(pool.status()).toMatchObject({ ready: 4, booting: 0 });
    expect(booted.map((m) => m.templateId).sort()).toEqual(["node-22", "node-22", "python-3.12", "python-3.12"]);
    // Every ready member is remembered with its init's pid (a later engine ends it after a crash).
    expect([...remembered.values()].every((pid) => typeof pid === "number")).toBe(true);

    const a = pool.take("python-3.12")!;
    const b = pool.take("python-3.12")!;
    expect(a.key).not.toBe(b.key);
    expect(pool.take("python-3.12")).toBeUndefined();
    // A claimed member is no longer the pool's: not remembered, not in its uids.
    expect(remembered.has(a.key)).toBe(false);
    expect(pool.uids()).not.toContain(a.uid);
    expect(pool.take("debian-12")).toBeUndefined();
    await settle();
    expect(pool.status().ready).toBe(4);
    const handedOut = new Set([a.key, b.key]);
    for (let i = 0; i < 2; i++) expect(handedOut.has(pool.take("python-3.12")!.key)).toBe(false);
  });

  it("refills only once no request is in flight, or after MAX_WAIT_MS at most", async () => {
    const { pool, booted } = harness({ size: 1 });
    pool.requestStarted();
    pool.start();
    await settle(MAX_WAIT_MS / 2);
    expect(booted).toHaveLength(0);
    pool.requestEnded();
    await settle();
    expect(booted).toHaveLength(1);

    // A request that never ends (a long exec stream) delays the refill, never stops it.
    pool.requestStarted();
    pool.take("python-3.12");
    await settle(MAX_WAIT_MS / 2);
    expect(booted).toHaveLength(1);
    await settle(MAX_WAIT_MS);
    expect(booted).toHaveLength(2);
  });

  it("counts booting and ready members for host admission and the uid allocator", async () => {
    const { pool, state } = harness();
    state.holdBoots = true;
    pool.start();
    await settle();
    expect(pool.commitment()).toEqual({ count: 1, memoryMb: 1024, threads: 0 });
    expect(pool.uids()).toHaveLength(1);
    state.holdBoots = false;
    state.pendingBoots.shift()!();
    await settle();
    expect(pool.commitment()).toEqual({ count: 2, memoryMb: 2048, threads: 4 });
    expect(new Set(pool.uids()).size).toBe(2);
  });

  it("boots nothing without room, and retries after RETRY_MS", async () => {
    const { pool, booted, state } = harness();
    state.room = false;
    pool.start();
    await settle();
    expect(booted).toHaveLength(0);
    // A create's take() does not bring the pending retry forward.
    pool.take("python-3.12");
    await settle();
    expect(booted).toHaveLength(0);
    state.room = true;
    await settle(RETRY_MS);
    expect(pool.status().ready).toBe(2);
  });

  it("a failed boot is logged and retried later, never in a loop", async () => {
    const { pool, booted, state, remembered } = harness();
    state.failBoot = true;
    pool.start();
    await settle(RETRY_MS / 2);
    expect(pool.status()).toMatchObject({ ready: 0, booting: 0 });
    expect(remembered.size).toBe(0);
    expect(state.attempts).toBe(1);
    // Creates meanwhile (each take() asks for a refill) wait for the retry like everyone else.
    for (let i = 0; i < 3; i++) pool.take("python-3.12");
    await settle();
    expect(state.attempts).toBe(1);
    state.failBoot = false;
    await settle(RETRY_MS);
    expect(booted).toHaveLength(2);
  });

  it("gives way: evictOne drops a member's commitment at once and ends it", async () => {
    const { pool, destroyed } = harness();
    pool.start();
    await settle();
    const uids = pool.uids();
    expect(pool.evictOne()).toBe(true);
    expect(pool.commitment().count).toBe(1);
    // Its uid is not handed out again before its processes are gone.
    expect(pool.uids().sort()).toEqual(uids.sort());
    await settle(0);
    expect(pool.uids()).toHaveLength(1);
    expect(destroyed).toHaveLength(1);
    expect(pool.evictOne()).toBe(true);
    expect(pool.evictOne()).toBe(false);
  });

  it("replaces a member that dies while pooled; a claimed member's death is not the pool's", async () => {
    const { pool, booted, destroyed } = harness({ size: 1 });
    pool.start();
    await settle();
    (booted[0]!.proc as unknown as FakeProc).die();
    await settle();
    expect(destroyed).toEqual([booted[0]!.key]);
    expect(booted).toHaveLength(2);
    const claimed = pool.take("python-3.12")!;
    await settle();
    (claimed.proc as unknown as FakeProc).die();
    await settle();
    expect(destroyed).not.toContain(claimed.key);
  });

  it("drain ends every member, one still booting included, and boots nothing after", async () => {
    const { pool, booted, destroyed, state, remembered } = harness();
    pool.start();
    await settle();
    pool.take("python-3.12");
    state.holdBoots = true;
    await settle();
    expect(pool.status().booting).toBe(1);
    const drained = pool.drain();
    state.pendingBoots.shift()!();
    await settle();
    await drained;
    expect(destroyed.sort()).toEqual(
      booted
        .slice(1)
        .map((m) => m.key)
        .sort(),
    );
    expect(remembered.size).toBe(0);
    pool.take("python-3.12");
    await settle(RETRY_MS);
    expect(booted).toHaveLength(3);
  });

  it("size 0 is no pool at all", async () => {
    const { pool, booted } = harness({ size: 0 });
    pool.start();
    await settle();
    expect(pool.serves("python-3.12")).toBe(false);
    expect(booted).toHaveLength(0);
  });
});

describe("a claimed sandbox's meter", () => {
  it("bills from the claim on: the CPU its cgroup spent in the pool is not the account's", () => {
    let cpuNs = 0.25e9;
    const cgroup = { read: () => ({ cpuNs, workingSetBytes: 0 }) } as unknown as SandboxCgroup;
    const meter = new SandboxMeter(1, 60, { cpu_seconds: 0, gb_seconds: 0 });
    meter.startFrom(cgroup);
    meter.sample(cgroup, 1000);
    expect(meter.cpuSeconds).toBe(0);
    cpuNs += 0.5e9;
    meter.sample(cgroup, 2000);
    expect(meter.cpuSeconds).toBeCloseTo(0.5, 9);
  });
});
