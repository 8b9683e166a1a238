import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { NoCgroups } from "./cgroups/none.js";
import { reapStale, tryWrite } from "./cgroups/shared.js";
import type { CgroupDriver } from "./cgroups/types.js";
import { V1_CONTROLLERS, V1Driver, type V1Controller } from "./cgroups/v1.js";
import { V2Driver } from "./cgroups/v2.js";
import type { OpaqueNames } from "./opaque-names.js";

export type { CgroupDriver, CgroupLimits, CgroupReading, CgroupSupport, SandboxCgroup } from "./cgroups/types.js";

/**
 * Per-sandbox resource control through the kernel's cgroups, v1 (one hierarchy per controller)
 * or v2 (unified). The engine nests its groups under its own cgroup path so it never touches
 * groups it does not own, and removes them on terminate and at shutdown. This module picks the
 * driver; each is its own implementation of CgroupDriver (cgroups/v1.ts, v2.ts, none.ts).
 */

const ROOT = "/sys/fs/cgroup";

function ownCgroupPaths(): Map<string, string> {
  const map = new Map<string, string>();
  try {
    for (const line of fs.readFileSync("/proc/self/cgroup", "utf8").split("\n")) {
      const [, ctrls, p] = line.split(":");
      if (ctrls === undefined || p === undefined) continue;
      for (const c of ctrls.split(",")) map.set(c, p);
    }
  } catch {
    /* no /proc: no cgroups */
  }
  return map;
}

/**
 * The name of the engine's parent groups (`baton-<instance>`): one per data dir, the same across
 * restarts, because sandboxes outlive the engine process and the next engine of the data dir
 * adopts their groups. Other engines never reap a `baton-d…` group (only the old per-pid ones).
 */
export function cgroupInstance(dataDir: string): string {
  let real = dataDir;
  try {
    real = fs.realpathSync(dataDir);
  } catch {
    /* not created yet */
  }
  return `d${createHash("sha256").update(real).digest("hex").slice(0, 16)}`;
}

/** Detects what this machine lets the engine control, by really creating a test group. */
export function detectCgroups(instance: string): CgroupDriver {
  const own = ownCgroupPaths();
  const v1Dirs = new Map<V1Controller, string>();
  for (const c of V1_CONTROLLERS) {
    const mount = path.join(ROOT, c);
    if (!fs.existsSync(path.join(mount, "cgroup.procs"))) continue;
    const parent = path.join(mount, own.get(c) ?? "/", `baton-${instance}`);
    reapStale(path.dirname(parent));
    try {
      fs.mkdirSync(parent, { recursive: true });
      const probe = path.join(parent, "probe");
      fs.mkdirSync(probe);
      fs.rmdirSync(probe);
      v1Dirs.set(c, parent);
    } catch {
      /* controller not writable here */
    }
  }
  if (v1Dirs.size > 0) return new V1Driver(v1Dirs);
  const unified = fs.existsSync(path.join(ROOT, "cgroup.controllers")) ? ROOT : path.join(ROOT, "unified");
  if (fs.existsSync(path.join(unified, "cgroup.controllers"))) {
    const parent = path.join(unified, own.get("") ?? "/", `baton-${instance}`);
    reapStale(path.dirname(parent));
    try {
      fs.mkdirSync(parent, { recursive: true });
      const avail = fs.readFileSync(path.join(parent, "cgroup.controllers"), "utf8").trim().split(/\s+/);
      const wanted = ["memory", "cpu", "pids"].filter((c) => avail.includes(c));
      tryWrite(path.join(parent, "cgroup.subtree_control"), wanted.map((c) => `+${c}`).join(" "));
      const enabled = fs.readFileSync(path.join(parent, "cgroup.subtree_control"), "utf8").trim().split(/\s+/);
      if (enabled.includes("memory") || enabled.includes("cpu") || enabled.includes("pids"))
        return new V2Driver(parent, enabled);
      fs.rmdirSync(parent);
    } catch {
      /* v2 not delegated to us */
    }
  }
  return new NoCgroups("neither a writable cgroup v1 controller nor a delegated cgroup v2 subtree was found");
}

export function noCgroups(reason: string): CgroupDriver {
  return new NoCgroups(reason);
}

/**
 * The driver with every sandbox group named opaquely (runtime/opaque-names.ts): cgroupfs is
 * readable by every local user, and a sandbox's id must not be. Groups an engine made before
 * names were opaque are still found by their id, so a restart adopts or reaps them as before.
 */
export function withOpaqueNames(inner: CgroupDriver, names: OpaqueNames): CgroupDriver {
  return {
    support: inner.support,
    otherEnginesAlive: () => inner.otherEnginesAlive(),
    create: (id, limits) => inner.create(names.encode(id), limits),
    adopt: (id) => inner.adopt(names.encode(id)) ?? inner.adopt(id),
    existing: () => inner.existing().map((name) => names.decode(name) ?? name),
    cleanup: () => inner.cleanup(),
  };
}
