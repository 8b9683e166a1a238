import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, exec, startEngine, type EngineHandle } from "./helpers/engine.js";

/**
 * Where the kernel refuses something the engine still runs, says so, and keeps what it can:
 * here user namespaces, cgroups and slirp4netns are treated as refused.
 */
let e: EngineHandle;
beforeAll(async () => {
  e = await startEngine({ env: { ORKESTR_ENGINE_DISABLE: "userns,cgroups,slirp4netns" } });
});
afterAll(async () => {
  await e?.stop();
});

describe("degraded isolation", () => {
  it("says what is degraded at start and in limits.isolation", async () => {
    const iso = (await e.api("GET", "/sandboxes/limits")).body.isolation;
    expect(iso.mode).toBe("bwrap-root");
    expect(iso.namespaces.user).toBe(false);
    expect(iso.cgroups.version).toBe("none");
    expect(iso.network.open).toBe(false);
    expect(iso.pause).toBe("unavailable");
    const text = iso.degraded.join("\n");
    expect(text).toMatch(/user namespaces refused/);
    expect(text).toMatch(/cgroups unavailable/);
    expect(text).toMatch(/network open unavailable/);
    expect(e.log()).toMatch(/degraded: user namespaces refused/);
  });

  it("still runs sandboxes as an unprivileged uid with no capabilities, and rlimits stand in for cgroups", async () => {
    const id = await createSandbox(e, { memory_mb: 128 });
    const r = await exec(
      e,
      id,
      "id -u; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status; grep 'Max processes' /proc/self/limits; ls /root 2>&1; touch /usr/x 2>&1",
    );
    const [uid] = r.stdout.split("\n");
    expect(Number(uid)).toBeGreaterThanOrEqual(500_000);
    expect(r.stdout).toMatch(/CapEff:\s+0000000000000000/);
    expect(r.stdout).toMatch(/NoNewPrivs:\s+1/);
    expect(r.stdout).toMatch(/Max processes\s+1024\s+1024/);
    expect(r.stdout).toMatch(/Read-only file system/);
    const mem = await exec(e, id, "python3 -c 'b = bytearray(400 * 1024 * 1024)'");
    expect(mem.exit_code).not.toBe(0);
    expect(mem.stderr).toMatch(/MemoryError/);
  });

  it("refuses what it cannot do with a clear error instead of faking it", async () => {
    const id = await createSandbox(e);
    const p = await e.api("POST", `/sandboxes/${id}/pause`);
    expect([p.status, p.body.code]).toEqual([501, "not_implemented"]);
    const open = await e.api("POST", "/sandboxes", { template: "python-3.12", network: "open" });
    expect([open.status, open.body.code]).toEqual([403, "network_not_allowed"]);
    expect((await e.api("DELETE", `/sandboxes/${id}`)).status).toBe(204);
  });

  // Last: it stops the engine. Without a user namespace setpriv changes the uid, which clears the
  // parent-death signal bwrap gave the sandbox's init: terminate and shutdown must kill it themselves.
  it("terminate and shutdown leave no sandbox process behind", async () => {
    const uidOf = async (id: string) => Number((await exec(e, id, "id -u")).stdout.trim());
    const a = await createSandbox(e);
    const b = await createSandbox(e);
    const [uidA, uidB] = [await uidOf(a), await uidOf(b)];
    await exec(e, a, "nohup sleep 300 >/dev/null 2>&1 &");
    expect(pidsOfUid(uidA).length).toBeGreaterThan(1);
    expect((await e.api("DELETE", `/sandboxes/${a}`)).status).toBe(204);
    await waitUntilGone(uidA);
    expect(pidsOfUid(uidB).length).toBeGreaterThan(0);
    await e.stop("SIGTERM");
    await waitUntilGone(uidB);
  });
});

async function waitUntilGone(uid: number): Promise<void> {
  const end = Date.now() + 5000;
  while (pidsOfUid(uid).length > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  expect(pidsOfUid(uid)).toEqual([]);
}

/** Pids whose real uid is `uid`. */
function pidsOfUid(uid: number): number[] {
  const pids: number[] = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const m = /^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${name}/status`, "utf8"));
      if (m && Number(m[1]) === uid) pids.push(Number(name));
    } catch {
      /* exited meanwhile */
    }
  }
  return pids;
}
