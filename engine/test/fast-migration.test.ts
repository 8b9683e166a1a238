import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { cgroupNameOf, createSandbox, exec, startEngine } from "./helpers/engine.js";

/**
 * The favordynmods hierarchy (runtime/cgroups/fast-migration.ts): mounted in the engine's own mount
 * namespace, never in the host's, and sandboxes still join their cgroups with it in place. How much
 * faster an exec after idle is, is for the engine bench to print, never a test.
 */

const mountsOf = (pid: number | "self") => fs.readFileSync(`/proc/${pid}/mountinfo`, "utf8");
const isRoot = process.getuid?.() === 0;

describe.skipIf(!isRoot)("cgroup task migrations favour dynamic changes", () => {
  it("the engine mounts its favordynmods hierarchy in its private namespace, and execs still land in the sandbox's cgroups", async () => {
    const e = await startEngine();
    try {
      expect(e.enginePid).toBeTruthy();
      const inside = mountsOf(e.enginePid!)
        .split("\n")
        .filter((l) => l.includes("name=baton-favordynmods"));
      expect(inside).toHaveLength(1);
      expect(inside[0]).toMatch(/\bfavordynmods\b/);
      expect(inside[0]).toContain(`${e.dataDir}/engine/cgroup-favordynmods`);
      // Nothing left on the host's mount table.
      expect(mountsOf("self")).not.toContain("name=baton-favordynmods");
      expect(e.log()).toContain("task migrations favour dynamic changes");

      const id = await createSandbox(e);
      const r = await exec(e, id, "cat /proc/self/cgroup");
      expect(r.exit_code).toBe(0);
      // The exec joined the sandbox's own groups (one per controller), not the engine's.
      const group = cgroupNameOf(e, id);
      expect(r.stdout).toMatch(new RegExp(`:memory:.*${group}`));
      expect(r.stdout).toMatch(new RegExp(`:cpu(,cpuacct)?:.*${group}`));
    } finally {
      await e.stop();
    }
    // A clean stop takes its mount point away too (the state dir may be a bind the engine removes).
    expect(fs.existsSync(`${e.dataDir}/engine/cgroup-favordynmods`)).toBe(false);
  });

  it("an engine restarted after an upgrade stop finds the hierarchy in the namespace its sandboxes keep, and keeps it", async () => {
    const a = await startEngine();
    let b: Awaited<ReturnType<typeof startEngine>> | null = null;
    try {
      const id = await createSandbox(a);
      expect(await a.stop("SIGUSR2")).toBe(0);
      b = await startEngine({ dataDir: a.dataDir! });
      expect(b.log()).toContain("mounted by an earlier engine");
      // The restart's sweep of leftover mounts left it alone: still exactly one.
      expect(
        mountsOf(b.enginePid!)
          .split("\n")
          .filter((l) => l.includes("name=baton-favordynmods")),
      ).toHaveLength(1);
      expect((await exec(b, id, "echo adopted")).stdout).toBe("adopted\n");
    } finally {
      await (b ?? a).stop();
    }
  }, 120_000);
});
