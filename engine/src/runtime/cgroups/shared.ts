import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { sleep } from "../../lib/time.js";
import type { SandboxCgroup } from "./types.js";

/** File helpers and freeze/sweep logic the v1 and v2 drivers share. */

export function tryWrite(file: string, value: string): boolean {
  try {
    fs.writeFileSync(file, value);
    return true;
  } catch {
    return false;
  }
}

export async function rmdirRetry(dir: string): Promise<void> {
  // rmdir is EBUSY for a few ms after the last task exits (engine-notes §3).
  for (let i = 0; i < 50; i++) {
    try {
      await fsp.rmdir(dir);
      return;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return;
      if (code !== "EBUSY") throw e;
      await sleep(5);
    }
  }
}

export function readNum(file: string): number {
  try {
    return Number(fs.readFileSync(file, "utf8").trim()) || 0;
  } catch {
    return 0;
  }
}

export function readStat(file: string): Map<string, number> {
  const m = new Map<string, number>();
  try {
    for (const line of fs.readFileSync(file, "utf8").split("\n")) {
      const [k, v] = line.split(" ");
      if (k && v) m.set(k, Number(v));
    }
  } catch {
    /* group gone */
  }
  return m;
}

/** whileFrozen for either cgroup version: one counted freeze hold around `fn`. */
export async function holdFrozen(
  cg: Pick<SandboxCgroup, "freeze" | "thaw">,
  hasFreezer: boolean,
  fn: () => number,
): Promise<void> {
  if (!hasFreezer) return sweepRepeatedly(fn);
  const frozen = await cg.freeze().catch(() => false);
  try {
    if (frozen) fn();
    else await sweepRepeatedly(fn);
  } finally {
    if (frozen) await cg.thaw().catch(() => undefined);
  }
}

/** Without a freezer: sweep until a pass finds nothing (bounded), so forks made during a pass are caught by the next. */
async function sweepRepeatedly(fn: () => number): Promise<void> {
  for (let i = 0; i < 20 && fn() > 0; i++) await sleep(5);
}

export async function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await sleep(2);
  }
  return check();
}

/**
 * Other engines' parent groups that are in use: a per-pid `baton-<pid>` (engines before sandboxes
 * outlived them) whose engine lives, or another data dir's `baton-d<hash>` that holds sandboxes.
 */
export function liveSiblings(parentOfParents: string, own: string): string[] {
  try {
    return fs.readdirSync(parentOfParents).filter((n) => {
      if (n === own) return false;
      if (/^baton-\d+$/.test(n)) return fs.existsSync(`/proc/${n.slice("baton-".length)}`);
      if (!/^baton-d[0-9a-f]+$/.test(n)) return false;
      try {
        return fs.readdirSync(path.join(parentOfParents, n), { withFileTypes: true }).some((d) => d.isDirectory());
      } catch {
        return false;
      }
    });
  } catch {
    return [];
  }
}

/**
 * Groups left by an engine that died without cleaning up (SIGKILL, power loss), from before
 * sandboxes outlived the engine: any sibling `baton-<pid>` whose engine process is gone. Their
 * tasks are killed and the groups removed. `baton-d<hash>` groups are their data dir's engine's
 * to adopt or reap (services/sandboxes.ts adoptAfterRestart), never another engine's.
 */
export function reapStale(parentOfParents: string): void {
  let names: string[] = [];
  try {
    names = fs.readdirSync(parentOfParents).filter((n) => /^baton-\d+$/.test(n));
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(name.slice("baton-".length));
    if (pid === process.pid || fs.existsSync(`/proc/${pid}`)) continue;
    const dir = path.join(parentOfParents, name);
    for (const child of fs.readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory())) {
      const group = path.join(dir, child.name);
      try {
        for (const task of fs.readFileSync(path.join(group, "cgroup.procs"), "utf8").split("\n").filter(Boolean)) {
          try {
            process.kill(Number(task), "SIGKILL");
          } catch {
            /* gone */
          }
        }
        tryWrite(path.join(group, "freezer.state"), "THAWED");
        fs.rmdirSync(group);
      } catch {
        /* still busy: left for the next start */
      }
    }
    try {
      fs.rmdirSync(dir);
    } catch {
      /* not empty yet */
    }
  }
}
