import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cgroupInstance } from "../src/runtime/cgroups.js";
import { createSandbox, exec, startEngine } from "./helpers/engine.js";
import { waitUntil } from "./helpers/async.js";
import { createTemplate, waitBuilt } from "./helpers/templates.js";

/** Restarts lose nothing, and a clean shutdown leaves nothing behind (engine-only). */

const CONTROLLERS = ["memory", "cpu", "cpuacct", "freezer", "pids"];

/** The engine's parent groups: one per data dir, kept across restarts (runtime/cgroups.ts). */
function cgroupDirsOf(dataDir: string): string[] {
  const found: string[] = [];
  const ownMemory = fs.readFileSync("/proc/self/cgroup", "utf8").match(/:memory:(\S+)/)?.[1] ?? "/";
  for (const c of CONTROLLERS) {
    const base = path.join("/sys/fs/cgroup", c, c === "memory" ? ownMemory : "/");
    const dir = path.join(base, `baton-${cgroupInstance(dataDir)}`);
    if (fs.existsSync(dir)) found.push(dir);
  }
  return found;
}

function processesOwnedBy(uids: Set<number>): string[] {
  const out: string[] = [];
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
      const uid = Number(status.match(/^Uid:\s+(\d+)/m)?.[1]);
      if (uids.has(uid)) out.push(`${pid} ${fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ")}`);
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

function helperProcessesFor(dataDir: string): string[] {
  const out: string[] = [];
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
      if (
        (cmd.includes("socat") && cmd.includes(dataDir)) ||
        (cmd.startsWith("slirp4netns") && !fs.existsSync(cmd.match(/\/proc\/(\d+)\/ns\/net/)?.[0] ?? "/"))
      )
        out.push(`${pid} ${cmd}`);
    } catch {
      /* exited */
    }
  }
  return out;
}

describe("restarts", () => {
  it("SIGTERM terminates every sandbox and leaves no process, cgroup, mount or file behind; state persists", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-restart-"));
    const uidBase = 7_000_000 + (process.pid % 100) * 10_000;
    const env = { ORKESTR_ENGINE_UID_BASE: String(uidBase) };
    const a = await startEngine({ dataDir, env });
    const ids = [
      await createSandbox(a),
      await createSandbox(a, { network: "restricted" }),
      await createSandbox(a, { network: "open" }),
    ];
    await exec(a, ids[0]!, "nohup sleep 1000 >/dev/null 2>&1 &");
    await exec(a, ids[0]!, "echo persisted > /workspace/f");
    // A volume is a loop-mounted ext4 image while a sandbox (here a paused one) holds it.
    const holder = await createSandbox(a, { volume: "restart-vol" });
    await exec(a, holder, "echo on-volume > /persist/v");
    expect((await a.api("POST", `/sandboxes/${holder}/pause`)).status).toBe(200);
    const loops = () =>
      execFileSync("losetup", ["-a"], { encoding: "utf8" })
        .split("\n")
        .filter((l) => l.includes(dataDir));
    expect(loops()).toHaveLength(1);
    const uids = new Set(Array.from({ length: 10 }, (_, i) => uidBase + i));
    expect(processesOwnedBy(uids).length).toBeGreaterThan(0);
    expect(cgroupDirsOf(dataDir).length).toBeGreaterThan(0);
    const token = a.token;

    expect(await a.stop("SIGTERM")).toBe(0);
    expect(await waitUntil(() => processesOwnedBy(uids).length === 0, 5000)).toBe(true);
    expect(cgroupDirsOf(dataDir)).toEqual([]);
    expect(helperProcessesFor(dataDir)).toEqual([]);
    expect(fs.readFileSync("/proc/self/mounts", "utf8")).not.toContain(dataDir);
    expect(fs.readdirSync(path.join(dataDir, "engine", "sbx"))).toEqual([]);
    expect(fs.readdirSync(path.join(dataDir, "engine", "holders"))).toEqual([]);
    expect(loops()).toEqual([]);
    expect(fs.readdirSync(path.join(dataDir, "engine", "volumes", "mnt"))).toEqual([]);

    const b = await startEngine({ dataDir, env });
    try {
      // The old token is still valid: tokens persist hashed in the engine's SQLite.
      const old = await b.api("GET", `/sandboxes/${ids[0]}`, undefined, { token });
      expect(old.status).toBe(200);
      expect(old.body).toMatchObject({ status: "terminated", status_reason: "engine shut down" });
      const events = (await b.api("GET", `/sandboxes/${ids[0]}/events`)).body.map((x: { type: string }) => x.type);
      expect(events).toEqual(["sandbox.created", "exec", "exec", "sandbox.terminated"]);
      const terminated = (await b.api("GET", "/sandboxes?status=terminated")).body.map((x: { id: string }) => x.id);
      expect(terminated).toEqual(expect.arrayContaining(ids));
      expect((await b.api("GET", "/volumes/restart-vol")).body).toMatchObject({
        status: "available",
        attached_sandbox_id: null,
      });
    } finally {
      await b.stop();
    }
  });

  it("after a crash (SIGKILL) the next start adopts sandboxes on a volume and on a custom template, mounts and files included", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-crash-"));
    const uidBase = 8_000_000 + (process.pid % 100) * 10_000;
    const env = { ORKESTR_ENGINE_UID_BASE: String(uidBase) };
    const a = await startEngine({ dataDir, env });
    const id = await createSandbox(a);
    await exec(a, id, "nohup sleep 1000 >/dev/null 2>&1 &");
    const holder = await createSandbox(a, { volume: "crash-vol" });
    await exec(a, holder, "echo before-crash > /persist/c && sync");
    const tpl = await createTemplate(a, { name: "crash-tpl", steps: ["echo from-the-template > /etc/baton-crash"] });
    expect((await waitBuilt(a, tpl.id)).status).toBe("ready");
    const onTemplate = await createSandbox(a, { template: "crash-tpl" });
    await exec(a, onTemplate, "nohup sleep 1000 >/dev/null 2>&1 &");
    const loops = () =>
      execFileSync("losetup", ["-a"], { encoding: "utf8" })
        .split("\n")
        .filter((l) => l.includes(dataDir));
    expect(loops()).toHaveLength(1);
    process.kill(a.enginePid!, "SIGKILL");
    await a.stop();
    const uids = new Set(Array.from({ length: 5 }, (_, i) => uidBase + i));
    // Sandboxes outlive the engine (runtime/holder.ts): nothing died with it.
    expect(processesOwnedBy(uids).length).toBeGreaterThan(0);

    const b = await startEngine({ dataDir, env });
    try {
      expect((await b.api("GET", `/sandboxes/${id}`)).body.status).toBe("running");
      // The volume's sandbox kept running on its still-mounted volume, which stays attached to it.
      expect((await b.api("GET", `/sandboxes/${holder}`)).body.status).toBe("running");
      expect((await exec(b, holder, "cat /persist/c && echo after-crash >> /persist/c")).stdout).toBe("before-crash\n");
      expect((await b.api("GET", "/volumes/crash-vol")).body).toMatchObject({
        status: "attached",
        attached_sandbox_id: holder,
      });
      expect(loops()).toHaveLength(1);
      // The custom template's sandbox kept its root (the template's view) and its processes.
      expect((await b.api("GET", `/sandboxes/${onTemplate}`)).body.status).toBe("running");
      expect((await exec(b, onTemplate, "cat /etc/baton-crash; pgrep -c -xf 'sleep 1000'")).stdout).toBe(
        "from-the-template\n1\n",
      );
      expect(b.log()).toContain("3 sandbox(es) of an earlier run adopted");
      // A template in use is not deleted under its sandbox: it goes when that sandbox ends.
      expect((await b.api("DELETE", `/templates/${tpl.id}`)).status).toBe(204);
      expect((await exec(b, onTemplate, "cat /etc/baton-crash")).stdout).toBe("from-the-template\n");

      // Released as usual afterwards: the volume is unmounted and free again, with both writes.
      expect((await b.api("DELETE", `/sandboxes/${holder}`)).status).toBe(204);
      expect(await waitUntil(() => loops().length === 0, 5000)).toBe(true);
      expect((await b.api("GET", "/volumes/crash-vol")).body).toMatchObject({
        status: "available",
        attached_sandbox_id: null,
      });
      const again = await createSandbox(b, { volume: "crash-vol" });
      expect((await exec(b, again, "cat /persist/c")).stdout).toBe("before-crash\nafter-crash\n");
      expect((await b.api("DELETE", `/sandboxes/${onTemplate}`)).status).toBe(204);
      expect(await waitUntil(() => !fs.existsSync(path.join(dataDir, "engine", "templates", tpl.id)), 5000)).toBe(true);
    } finally {
      await b.stop();
    }
    expect(await waitUntil(() => processesOwnedBy(uids).length === 0, 5000)).toBe(true);
    expect(cgroupDirsOf(dataDir)).toEqual([]);
    expect(loops()).toEqual([]);
  }, 180_000);

  it("an upgrade stop (SIGUSR2) keeps a volume's and a custom template's sandboxes, mounted, for the next engine", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-upgrade-"));
    const uidBase = 8_500_000 + (process.pid % 100) * 10_000;
    const env = { ORKESTR_ENGINE_UID_BASE: String(uidBase) };
    const a = await startEngine({ dataDir, env });
    const holder = await createSandbox(a, { volume: "upgrade-vol" });
    await exec(a, holder, "echo kept > /persist/u && sync");
    const tpl = await createTemplate(a, { name: "upgrade-tpl", steps: ["echo on-template > /etc/baton-upgrade"] });
    expect((await waitBuilt(a, tpl.id)).status).toBe("ready");
    const onTemplate = await createSandbox(a, { template: "upgrade-tpl" });
    expect(await a.stop("SIGUSR2")).toBe(0);

    const b = await startEngine({ dataDir, env });
    try {
      expect((await exec(b, holder, "cat /persist/u")).stdout).toBe("kept\n");
      expect((await exec(b, onTemplate, "cat /etc/baton-upgrade")).stdout).toBe("on-template\n");
      expect((await b.api("GET", "/volumes/upgrade-vol")).body).toMatchObject({ attached_sandbox_id: holder });
    } finally {
      await b.stop();
    }
    expect(fs.readFileSync("/proc/self/mounts", "utf8")).not.toContain(dataDir);
  }, 180_000);
});
