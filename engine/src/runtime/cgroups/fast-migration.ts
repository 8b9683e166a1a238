import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/**
 * Every exec and terminal joins its sandbox's cgroups by writing its own pid to `cgroup.procs`: a
 * task migration. The kernel guards migrations with one global per-CPU rwsem, and by default its
 * writer waits for an RCU grace period unless another migration happened within about one grace
 * period. On a quiet host that wait is the first exec after a pause: measured on the 2-core VM,
 * moving a fresh `sh` into a cgroup took 10–21 ms after 50–500 ms of idle against 2–3 ms back to
 * back, which was most of a warm sandbox's create → first exec.
 *
 * The cgroup flag `favordynmods` (Linux ≥ 6.0) keeps that rwsem in its reader-slow-path mode for as
 * long as any hierarchy carrying the flag exists: a migration then never waits for a grace period,
 * and forks and exits pay an atomic instead of a per-CPU counter (the kernel's documented trade).
 * The flag cannot be added to a mounted hierarchy (remount refuses option changes), so the engine
 * mounts a named hierarchy of its own with no controllers and the flag, inside its private mount
 * namespace: no existing mount changes, nothing is added to the host's mount table, and the
 * hierarchy goes when the namespace does (the engine, or the holders of the sandboxes that outlive
 * it; a restarted engine joins that namespace and finds the mount in place).
 */

const NAME = "baton-favordynmods";

/** Where the hierarchy is mounted: the restart's sweep of leftover mounts keeps it (services/sandboxes.ts). */
export function fastMigrationDir(stateDir: string): string {
  return path.join(stateDir, "cgroup-favordynmods");
}

export type FastMigration = { enabled: true; already: boolean } | { enabled: false; reason: string };

/** The mount point's line in /proc/self/mountinfo, if the hierarchy is mounted there. */
function mountedAt(dir: string): boolean {
  try {
    const real = fs.realpathSync(dir);
    return fs
      .readFileSync("/proc/self/mountinfo", "utf8")
      .split("\n")
      .some((line) => line.split(" ")[4] === real && line.includes(`name=${NAME}`));
  } catch {
    return false;
  }
}

/**
 * Mounts the favordynmods hierarchy under `stateDir` when the engine is root in its own mount
 * namespace; anywhere else it would be a mount left on the host, so it is not tried.
 */
export function enableFastMigration(opts: {
  stateDir: string;
  privateMountNs: boolean;
  isRoot: boolean;
}): FastMigration {
  if (!opts.isRoot) return { enabled: false, reason: "the engine is not root" };
  if (!opts.privateMountNs) return { enabled: false, reason: "the engine is not in a private mount namespace" };
  const dir = fastMigrationDir(opts.stateDir);
  if (mountedAt(dir)) return { enabled: true, already: true };
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    execFileSync("mount", ["-t", "cgroup", "-o", `none,name=${NAME},favordynmods`, "cgroup", dir], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    return { enabled: true, already: false };
  } catch (e) {
    const stderr = (e as { stderr?: Buffer }).stderr?.toString().trim().split("\n")[0];
    return { enabled: false, reason: stderr || (e as Error).message.split("\n")[0]! };
  }
}

/**
 * A clean stop with no sandbox left to keep: the hierarchy is unmounted and its mount point removed
 * (the namespace would drop the mount anyway, but the empty directory would stay in the state dir,
 * which may itself be a bind mount the engine removes next). An upgrade stop keeps it for the
 * next engine.
 */
export function disableFastMigration(stateDir: string): void {
  const dir = fastMigrationDir(stateDir);
  if (mountedAt(dir)) spawnSync("umount", ["-l", dir], { stdio: "ignore" });
  try {
    fs.rmdirSync(dir);
  } catch {
    /* never made, or still busy */
  }
}
