import { describe, expect, it } from "vitest";
import { buildForkRequest, forkCountError, initialForkState, MAX_FORKS } from "../../components/snapshots/fork-request";
import { createSnapshotCode, deleteSnapshotCode, forkCode } from "../../components/snapshots/snapshot-code";
import { memoryFact, oldestSnapshots, snapshotCap } from "../../components/snapshots/snapshot-facts";
import { snapshotNameError, suggestSnapshotName } from "../../components/snapshots/snapshot-name";
import { newRow } from "../../components/sandboxes/create/create-request";
import type { Limits } from "../../lib/orkestr/schemas/limits";
import type { Snapshot } from "../../lib/orkestr/schemas/snapshots";

const LOCAL = "http://127.0.0.1:8787";
const limits = {
  plan: "payg",
  max_named_snapshots: 3,
  named_snapshots: 2,
  snapshots_include_memory: false,
  max_timeout_seconds: 3600,
  sizes: [
    { size: "small", allowed: true },
    { size: "large", allowed: false },
  ],
  isolation: {
    degraded: [
      "shared kernel: sandboxes are namespaces and cgroups",
      "pause keeps memory in RAM (freezer); snapshots and forks copy the filesystem only (no CRIU on this kernel)",
    ],
  },
} as unknown as Limits;

describe("snapshot names", () => {
  it("follows the engine's rule, said next to the field", () => {
    expect(snapshotNameError("warmed-up_1.0")).toBeNull();
    expect(snapshotNameError("")).toMatch(/name/);
    expect(snapshotNameError("-dash")).toMatch(/starting with a letter or digit/);
    expect(snapshotNameError("has space")).toMatch(/Letters, digits/);
    expect(snapshotNameError("snap_01ABC")).toMatch(/ids do/);
    expect(snapshotNameError("SNAP_x")).toMatch(/ids do/);
    expect(snapshotNameError("a".repeat(64))).toMatch(/63/);
  });

  it("suggests a valid name from the template and the UTC time", () => {
    const at = new Date(Date.UTC(2026, 11, 3, 23, 59));
    expect(suggestSnapshotName("python-3.12", at)).toBe("python-3.12-20261203-2359");
    expect(suggestSnapshotName(null, at)).toBe("snapshot-20261203-2359");
    expect(suggestSnapshotName("tpl/weird name", at)).toBe("tpl-weird-name-20261203-2359");
    expect(suggestSnapshotName("snap_like", at)).toBe("snapshot-20261203-2359");
    for (const t of ["x".repeat(100), "__", "node-22"])
      expect(snapshotNameError(suggestSnapshotName(t, at))).toBeNull();
  });
});

describe("the cap and what to delete", () => {
  const snaps = [
    { id: "snap_c", created_at: "2026-12-03T10:00:00Z" },
    { id: "snap_a", created_at: "2026-12-01T10:00:00Z" },
    { id: "snap_d", created_at: null },
    { id: "snap_b", created_at: "2026-12-02T10:00:00Z" },
  ] as Snapshot[];

  it("reads used / cap from the limits, or counts the list when the server gives no count", () => {
    expect(snapshotCap(limits, snaps)).toEqual({ used: 2, cap: 3, full: false });
    expect(snapshotCap({ max_named_snapshots: 4 } as Limits, snaps)).toEqual({ used: 4, cap: 4, full: true });
    expect(snapshotCap(null, undefined)).toEqual({ used: null, cap: null, full: false });
    expect(snapshotCap({ max_named_snapshots: null } as Limits, snaps)).toEqual({ used: 4, cap: null, full: false });
  });

  it("names the oldest first, unknown times last", () => {
    expect(oldestSnapshots(snaps).map((s) => s.id)).toEqual(["snap_a", "snap_b", "snap_c"]);
    expect(oldestSnapshots(snaps, 10).map((s) => s.id)).toEqual(["snap_a", "snap_b", "snap_c", "snap_d"]);
  });
});

describe("whether memory was captured", () => {
  it("says no with the captured paths and the engine's own reason", () => {
    const fact = memoryFact(
      { id: "snap_1", memory_captured: false, captured_paths: ["/workspace", "/tmp"] } as Snapshot,
      limits,
    );
    expect(fact.captured).toBe("no");
    expect(fact.summary).toBe("Files only (/workspace and /tmp): a fork starts its processes afresh.");
    expect(fact.reason).toMatch(/no CRIU on this kernel/);
  });

  it("falls back to the plan's snapshots_include_memory, and says so when nobody says", () => {
    expect(memoryFact({ id: "s" } as Snapshot, { snapshots_include_memory: true } as unknown as Limits).captured).toBe(
      "yes",
    );
    const unknown = memoryFact({ id: "s" } as Snapshot, {} as Limits);
    expect(unknown.captured).toBe("unknown");
    expect(unknown.reason).toBeNull();
    expect(memoryFact({ id: "s", memory_captured: true } as Snapshot, limits).captured).toBe("yes");
  });
});

describe("the fork request", () => {
  it("is the create form's body with the snapshot as source, nothing left at its default", () => {
    const state = initialForkState("snap_1", limits);
    const r = buildForkRequest(state, "2", limits);
    expect(r.body).toEqual({ snapshot: "snap_1" });
    expect(r.count).toBe(2);
    expect(r.errors).toEqual({});
  });

  it("carries the options that apply and the create form's checks", () => {
    const state = {
      ...initialForkState("snap_1", limits),
      size: "small",
      network: "restricted" as const,
      allowDomains: ["pypi.org"],
      timeoutSeconds: "900",
      env: [newRow("TASK", "a")],
      metadata: [newRow("experiment", "b")],
      // Never sent with a fork, whatever the state holds.
      volumeChoice: "new" as const,
      newVolumeName: "v",
      previewAuth: true,
    };
    expect(buildForkRequest(state, "1", limits).body).toEqual({
      snapshot: "snap_1",
      size: "small",
      network: "restricted",
      allow_domains: ["pypi.org"],
      timeout_seconds: 900,
      env: { TASK: "a" },
      metadata: { experiment: "b" },
    });
    const refused = buildForkRequest({ ...state, size: "large", timeoutSeconds: "99999" }, "1", limits);
    expect(refused.body).toBeNull();
    expect(Object.keys(refused.errors).sort()).toEqual(["size", "timeout_seconds"]);
  });

  it("wants 1 to MAX_FORKS children", () => {
    expect(forkCountError("1")).toBeNull();
    expect(forkCountError(String(MAX_FORKS))).toBeNull();
    expect(forkCountError(String(MAX_FORKS + 1))).toMatch(/At most/);
    expect(forkCountError("0")).toMatch(/At least/);
    expect(forkCountError("two")).toMatch(/whole number/);
    const r = buildForkRequest(initialForkState("snap_1", limits), "0", limits);
    expect(r.body).toBeNull();
    expect(r.errors.count).toMatch(/At least/);
  });
});

describe("snapshot actions as code", () => {
  it("never holds a token, and names the server when it is not the hosted API", () => {
    for (const s of [
      createSnapshotCode("sbx_1", "warmed", LOCAL),
      deleteSnapshotCode("snap_1", LOCAL),
      forkCode({ snapshot: "snap_1" }, 3, LOCAL),
    ]) {
      for (const code of Object.values(s)) expect(code).not.toMatch(/ork_[A-Za-z0-9]/);
      expect(s.python).toContain(LOCAL);
      expect(s.curl).toContain("$ORKESTR_API_KEY");
    }
  });

  it("takes and deletes a snapshot with the SDK's names and the contract's routes", () => {
    const take = createSnapshotCode("sbx_1", "warmed");
    expect(take.python).toContain('Sandbox.get("sbx_1")');
    expect(take.python).toContain('sbx.snapshot(name="warmed")');
    expect(take.javascript).toContain('sbx.snapshot({ name: "warmed" })');
    expect(take.curl).toContain('-X POST "https://api.orkestr.eu/v1/sandboxes/sbx_1/snapshots"');
    expect(take.curl).toContain("Idempotency-Key");
    expect(deleteSnapshotCode("snap_1").curl).toContain('-X DELETE "https://api.orkestr.eu/v1/snapshots/snap_1"');
    expect(deleteSnapshotCode("snap_1").python).toContain('Snapshot.delete("snap_1")');
  });

  it("forks one child as the create form's code, N children in a loop, env read by name", () => {
    const body = { snapshot: "snap_1", size: "small" as const, env: { TASK: "secret-value" } };
    const one = forkCode(body, 1);
    expect(one.python).toContain("sbx = Sandbox.create(");
    const three = forkCode(body, 3);
    expect(three.python).toContain("for _ in range(3)");
    expect(three.python).toContain('snapshot="snap_1"');
    expect(three.python).toContain('os.environ["TASK"]');
    expect(three.python).toContain("for sbx in children:");
    expect(three.javascript).toContain("Array.from({ length: 3 }");
    expect(three.javascript).toContain('process.env["TASK"]');
    expect(three.javascript).toContain("for (const sbx of children)");
    expect(three.curl).toMatch(/^for i in \$\(seq 1 3\); do\n[\s\S]*\ndone\n$/);
    for (const code of Object.values(three)) expect(code).not.toContain("secret-value");
  });
});
