import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { openDb } from "../src/store/db.js";
import { PLANS, SIZES } from "../src/plans.js";
import { measureHost, parseLoadavgThreads, parseMeminfo, type HostMeasure } from "../src/runtime/capacity.js";
import {
  checkDisk,
  checkSandbox,
  effectiveRamBudgetMb,
  hostCapacity,
  HostAdmission,
  maxConcurrent,
  reservesFor,
  type Commitments,
} from "../src/services/admission.js";

/**
 * The host clamp's arithmetic (services/admission.ts) on measured numbers given here, so each case
 * is a machine we choose: the one the bug report describes (23 GiB, pid_max 32768) first.
 */

const PIDS = 1024;
const GiB = 1024;

const machine = (over: Partial<HostMeasure> = {}): HostMeasure => ({
  memoryTotalMb: 23 * GiB,
  memoryAvailableMb: null,
  pidMax: 32_768,
  threadsMax: 192_726,
  threadsInUse: 400,
  pidsCgroup: null,
  diskTotalMb: 100 * GiB,
  diskFreeMb: 60 * GiB,
  overridden: [],
  ...over,
});

const nothing: Commitments = {
  sandboxMemoryMb: 0,
  pausedMemoryMb: 0,
  pooled: 0,
  pooledMemoryMb: 0,
  buildMemoryMb: 0,
  pids: 0,
  sandboxThreadsNow: 0,
  diskMb: 0,
};

/** Commitments of `live` running and `paused` paused sandboxes of `mb` each. */
const sandboxes = (live: number, paused: number, mb = SIZES.small.memory_mb, threadsEach = 5): Commitments => ({
  ...nothing,
  sandboxMemoryMb: (live + paused) * mb,
  pausedMemoryMb: paused * mb,
  pids: (live + paused) * PIDS,
  sandboxThreadsNow: (live + paused) * threadsEach,
});

describe("reserves", () => {
  it("default to max(1 GiB, 10 %) of RAM, max(2048, 10 %) of pids, max(2 GiB, 2 %) of disk; configured values win", () => {
    expect(reservesFor(machine())).toEqual({ memoryMb: 2355, pids: 3277, diskMb: 2048 });
    // Small machine: the floors. pid_max 4 M but threads-max 192 k: the smaller is the limit.
    expect(reservesFor(machine({ memoryTotalMb: 4 * GiB, pidMax: 4_194_304, diskTotalMb: 20 * GiB }))).toEqual({
      memoryMb: 1024,
      pids: 19_273,
      diskMb: 2048,
    });
    expect(reservesFor(machine({ diskTotalMb: 1024 * GiB })).diskMb).toBe(20_972);
    expect(reservesFor(machine(), { memoryMb: 512, pids: 100, diskMb: 0 })).toEqual({
      memoryMb: 512,
      pids: 100,
      diskMb: 0,
    });
  });
});

describe("memory: the plan would admit it, the machine does not", () => {
  const m = machine();
  const r = reservesFor(m);
  const room = m.memoryTotalMb - r.memoryMb; // 21197 MiB

  it("on the reported machine, payg's 32 GiB stops at what 23 GiB minus the reserve holds", () => {
    const plan = PLANS.payg;
    let live = 0;
    // Admit small sandboxes until the machine says no; the plan alone would go on to 32.
    while (!checkSandbox(hostCapacity(m, r, sandboxes(live, 0)), { memoryMb: SIZES.small.memory_mb, pidsMax: PIDS }))
      live++;
    expect(live).toBe(Math.floor(room / 1024));
    expect(live).toBe(20);
    expect((live + 1) * SIZES.small.memory_mb).toBeLessThanOrEqual(plan.ramBudgetMb);
    const refusal = checkSandbox(hostCapacity(m, r, sandboxes(live, 0)), {
      memoryMb: SIZES.small.memory_mb,
      pidsMax: PIDS,
    })!;
    expect(refusal).toMatchObject({ resource: "memory", needed: 1024, available: room - 20 * 1024 });
    expect(refusal.detail).toMatch(
      /^This machine has 717 MiB of RAM left for sandboxes \(23\.0 GiB in all, 2\.3 GiB kept for the host, the engine and the console; 20\.0 GiB is held by running and paused sandboxes.*this sandbox needs 1\.0 GiB\. This is the machine's capacity, not your plan's limit/,
    );
  });

  it("counts paused sandboxes: they stay in RAM, though the plan's budget ignores them", () => {
    // 10 paused (payg's cap) + 10 live = the whole machine; the plan still sees 10 GiB of 32 in use.
    const cap = hostCapacity(m, r, sandboxes(10, 10));
    expect(cap.memory_committed_mb).toBe(20 * 1024);
    expect(checkSandbox(cap, { memoryMb: 1024, pidsMax: PIDS })?.resource).toBe("memory");
    // Without the paused ones the same create fits.
    expect(checkSandbox(hostCapacity(m, r, sandboxes(10, 0)), { memoryMb: 1024, pidsMax: PIDS })).toBeNull();
    // A template build holds its share too.
    expect(
      checkSandbox(hostCapacity(m, r, { ...sandboxes(16, 0), buildMemoryMb: 4096 }), { memoryMb: 1024, pidsMax: PIDS })
        ?.resource,
    ).toBe("memory");
  });

  it("a resuming sandbox is already counted: admitted when full, refused only when the machine is over-committed", () => {
    const full = hostCapacity(m, r, sandboxes(19, 1));
    expect(checkSandbox(full, { memoryMb: 1024, pidsMax: PIDS })).not.toBeNull();
    expect(checkSandbox(full, { memoryMb: 1024, pidsMax: PIDS, counted: true })).toBeNull();
    // The machine shrank under its sandboxes (a memory balloon): thawing one would let it grow.
    const shrunk = hostCapacity(machine({ memoryTotalMb: 16 * GiB }), r, sandboxes(19, 1));
    const refusal = checkSandbox(shrunk, { memoryMb: 1024, pidsMax: PIDS, counted: true })!;
    expect(refusal.resource).toBe("memory");
    expect(refusal.detail).toMatch(/already hold more RAM than it has for them.*cannot resume/);
  });

  it("the limits response's effective budget: the plan's, less what paused sandboxes and builds hold", () => {
    const cap = hostCapacity(m, r, { ...sandboxes(2, 3), buildMemoryMb: 4096 });
    const live = 2 * 1024;
    // One account holds every sandbox: its budget is what the machine has left beside paused ones and builds.
    expect(effectiveRamBudgetMb(PLANS.payg.ramBudgetMb, live, cap)).toBe(room - 3 * 1024 - 4096);
    expect(effectiveRamBudgetMb(PLANS.free.ramBudgetMb, live, cap)).toBe(2048);
    // Another account with none running gets what the machine has free, at most its plan's.
    expect(effectiveRamBudgetMb(PLANS.payg.ramBudgetMb, 0, cap)).toBe(room - 5 * 1024 - 4096);
    // A create of X passes both checks iff the account's live + X <= the effective budget.
    const x = effectiveRamBudgetMb(PLANS.payg.ramBudgetMb, live, cap) - live;
    expect(checkSandbox(cap, { memoryMb: x, pidsMax: PIDS })).toBeNull();
    expect(checkSandbox(cap, { memoryMb: x + 1, pidsMax: PIDS })).not.toBeNull();
    expect(maxConcurrent(PLANS.payg.ramBudgetMb, cap, PIDS)).toBe(20);
    expect(maxConcurrent(PLANS.free.ramBudgetMb, cap, PIDS)).toBe(2);
  });

  it("warm-pool members hold memory and pids like sandboxes; the effective budget counts their memory as free", () => {
    const pooled = { ...sandboxes(2, 0), pooled: 3, pooledMemoryMb: 3 * 1024 };
    const cap = hostCapacity(m, r, {
      ...pooled,
      sandboxMemoryMb: pooled.sandboxMemoryMb + 3 * 1024,
      pids: pooled.pids + 3 * PIDS,
    });
    expect(cap).toMatchObject({ pooled_sandboxes: 3, memory_pooled_mb: 3 * 1024, memory_committed_mb: 5 * 1024 });
    expect(cap.memory_free_mb).toBe(room - 5 * 1024);
    expect(cap.pids_committed).toBe(5 * PIDS);
    // The pool gives way (a create the machine is short for ends members), so an account may plan with it.
    expect(effectiveRamBudgetMb(PLANS.payg.ramBudgetMb, 0, cap)).toBe(room - 2 * 1024);
  });
});

describe("pids", () => {
  // Plenty of RAM, so pids are what binds.
  const m = machine({ memoryTotalMb: 512 * GiB, threadsInUse: 1500 });
  const r = reservesFor(m);

  it("each sandbox reserves its pids.max; the host's threads (outside sandboxes) and the reserve come off pid_max", () => {
    let n = 0;
    while (
      !checkSandbox(hostCapacity(m, r, sandboxes(n - Math.floor(n / 3), Math.floor(n / 3), 1024, 20)), {
        memoryMb: 1024,
        pidsMax: PIDS,
      })
    )
      n++;
    // Threads inside sandboxes are inside their reservation: the host uses 1500 − 20·n.
    const cap = hostCapacity(m, r, sandboxes(n - Math.floor(n / 3), Math.floor(n / 3), 1024, 20));
    expect(cap.pids_used_by_host).toBe(1500 - 20 * n);
    expect(n).toBe(Math.floor((32_768 - 3277 - (1500 - 20 * n)) / PIDS));
    const refusal = checkSandbox(cap, { memoryMb: 1024, pidsMax: PIDS })!;
    expect(refusal.resource).toBe("pids");
    expect(refusal.detail).toMatch(/room for \d+ more processes in sandboxes \(limit 32768, 3277 kept for the host/);
    expect(maxConcurrent(PLANS.enterprise.ramBudgetMb, cap, PIDS)).toBe(
      Math.floor((32_768 - 3277 - cap.pids_used_by_host) / PIDS),
    );
  });

  it("a pids cgroup above the engine (systemd TasksMax) binds when it is tighter", () => {
    const capped = machine({
      memoryTotalMb: 512 * GiB,
      pidsCgroup: { max: 4915, current: 215, path: "/sys/fs/cgroup/pids/system.slice/baton.service" },
    });
    const cap = hostCapacity(capped, reservesFor(capped), sandboxes(1, 0, 1024, 15));
    expect(cap).toMatchObject({ pids_limit: 4915, pids_used_by_host: 200, pids_committed: 1024 });
    // 4915 − 3277 − 200 − 1024 = 414 < 1024.
    expect(checkSandbox(cap, { memoryMb: 1024, pidsMax: PIDS })?.resource).toBe("pids");
    expect(
      checkSandbox(hostCapacity(capped, { ...reservesFor(capped), pids: 500 }, sandboxes(1, 0, 1024, 15)), {
        memoryMb: 1024,
        pidsMax: PIDS,
      }),
    ).toBeNull();
  });
});

describe("disk", () => {
  it("refuses a volume or template the free space, less the reserve and earlier promises, cannot hold", () => {
    const m = machine({ diskFreeMb: 50 * GiB });
    const r = reservesFor(m); // 2 GiB
    // 40 GiB promised to volumes not yet written and builds: 8 GiB left.
    const cap = hostCapacity(m, r, { ...nothing, diskMb: 40 * GiB });
    expect(cap.disk_available_mb).toBe(8 * GiB);
    expect(checkDisk(cap, 8 * GiB, "this volume")).toBeNull();
    const refusal = checkDisk(cap, 8 * GiB + 1, "this volume")!;
    expect(refusal).toMatchObject({ resource: "disk", available: 8 * GiB });
    expect(refusal.detail).toBe(
      "This machine's data disk has 8.0 GiB left for volumes, templates and snapshots (50.0 GiB free, 2.0 GiB kept free for the host, 40.0 GiB promised to existing volumes, template builds and snapshots being taken) and this volume needs 8.0 GiB. This is the machine's capacity, not your plan's limit: delete a volume, template or snapshot, or retry later.",
    );
    // A nearly full disk: nothing at all, whatever was promised.
    expect(hostCapacity(machine({ diskFreeMb: 1000 }), r, nothing).disk_available_mb).toBe(0);
    expect(checkDisk(hostCapacity(machine({ diskFreeMb: 1000 }), r, nothing), 1, "x")?.resource).toBe("disk");
  });
});

describe("disk reservations (a snapshot being taken)", () => {
  it("are checked and held together, count as promised until released, and are given back exactly once", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-admission-"));
    const db = openDb(dir);
    try {
      let measured = 0;
      // 1000 MiB free, 100 kept: 900 MiB to promise.
      const admission = new HostAdmission(
        loadConfig({ BATON_DATA_DIR: dir, ORKESTR_ENGINE_DISK_RESERVE_MB: "100" }),
        db,
        { sandboxThreads: () => undefined, volumeData: () => ({ path: dir, image: false }) },
        PIDS,
        () => (measured++, machine({ diskFreeMb: 1000 })),
      );
      const a = admission.reserveDisk(600.2, "a snapshot of sbx_a");
      expect(a.mb).toBe(601);
      expect(admission.capacity()).toMatchObject({ disk_committed_mb: 601, disk_available_mb: 299 });
      let refused: unknown;
      try {
        admission.reserveDisk(300, "a snapshot of sbx_b (its /workspace and /tmp hold 300 MiB)");
      } catch (e) {
        refused = e;
      }
      expect(refused).toMatchObject({ status: 503, code: "fleet_full", extra: { resource: "disk", needed_mb: 300 } });
      expect((refused as { detail: string }).detail).toMatch(/and a snapshot of sbx_b .* needs 300 MiB/);
      expect((refused as { headers: Record<string, string> }).headers["Retry-After"]).toBe("30");
      const b = admission.reserveDisk(299, "a snapshot of sbx_c");
      const before = measured;
      a.release();
      a.release();
      expect(admission.capacity()).toMatchObject({ disk_committed_mb: 299, disk_available_mb: 601 });
      // Released: what the copy wrote is measured again at once, not a second later.
      expect(measured).toBe(before + 1);
      b.release();
      expect(admission.capacity().disk_committed_mb).toBe(0);
    } finally {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("measuring", () => {
  it("parses /proc/meminfo and /proc/loadavg", () => {
    expect(parseMeminfo("MemTotal:       24683584 kB\nMemFree:  1 kB\nMemAvailable:   24182596 kB\n")).toEqual({
      totalMb: 24105,
      availableMb: 23615,
    });
    expect(parseMeminfo("MemTotal: 2048 kB\n")).toEqual({ totalMb: 2, availableMb: null });
    expect(() => parseMeminfo("nothing")).toThrow(/MemTotal/);
    expect(parseLoadavgThreads("0.12 0.33 0.21 1/118 8107\n")).toBe(118);
  });

  it("reads this machine, and the test knobs replace (and are named) only what they override", () => {
    const real = measureHost(os.tmpdir());
    expect(real.memoryTotalMb).toBe(Math.floor(os.totalmem() / 1024 / 1024));
    expect(real.threadsInUse).toBeGreaterThan(0);
    expect(real.pidMax).toBeGreaterThan(real.threadsInUse);
    expect(real.diskFreeMb).toBeLessThanOrEqual(real.diskTotalMb);
    expect(real.overridden).toEqual([]);
    const knobs = measureHost(`${os.tmpdir()}/not/made/yet`, { memoryMb: 3072, diskFreeMb: 400 });
    expect(knobs).toMatchObject({
      memoryTotalMb: 3072,
      diskFreeMb: 400,
      overridden: ["memory_total_mb", "disk_free_mb"],
    });
    expect(knobs.pidMax).toBe(real.pidMax);
  });
});
