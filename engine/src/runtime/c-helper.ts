import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { which } from "../lib/which.js";
import { CACHE_DIRS, privateDir } from "./seccomp.js";

/**
 * The engine's small static C helpers (the sandbox holder, the overlay mounter) are built by the
 * engine itself from this repository's source, into a root-only cache keyed by the source's hash:
 * nothing privileged ever runs a file a sandbox can write, and engines started in parallel share
 * one build. Static, so a helper keeps running whatever happens to the host's libraries during an
 * upgrade. (The seccomp helper links libseccomp and has its own build: runtime/seccomp.ts.)
 */
export type HelperBuild = { path: string; built: boolean } | { path: null; reason: string };

/** Builds (or finds in the cache) the helper `name` from `source`. Never throws: a reason comes back instead. */
export function buildHelper(opts: {
  /** The binary's name, and the cache directory's prefix. */
  name: string;
  /** What it is, for the reason ("the sandbox holder"). */
  what: string;
  source: string;
  stateDir: string;
  disabled?: boolean;
}): HelperBuild {
  if (opts.disabled) return { path: null, reason: "disabled by ORKESTR_ENGINE_DISABLE" };
  const cc = which("cc") ?? which("gcc");
  if (!cc) return { path: null, reason: `no C compiler to build ${opts.what} (apt-get install gcc)` };
  let source: string;
  try {
    source = fs.readFileSync(opts.source, "utf8");
  } catch (e) {
    return { path: null, reason: `cannot read ${opts.source}: ${(e as Error).message}` };
  }
  const key = createHash("sha256").update(source).digest("hex").slice(0, 16);
  const base = [...CACHE_DIRS, path.join(opts.stateDir, "cache")].find(privateDir);
  if (!base) return { path: null, reason: `no private directory to build ${opts.what} in` };
  const dir = path.join(base, `${opts.name.replace(/^baton-/, "")}-${key}`);
  const bin = path.join(dir, opts.name);
  if (fs.existsSync(bin)) return { path: bin, built: false };
  const tmp = `${dir}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  fs.mkdirSync(tmp, { mode: 0o700 });
  try {
    const c = spawnSync(cc, ["-O2", "-Wall", "-static", "-o", path.join(tmp, opts.name), opts.source], {
      encoding: "utf8",
      timeout: 120_000,
    });
    if (c.status !== 0)
      return {
        path: null,
        reason: `building ${opts.what} failed: ${(c.stderr ?? c.error?.message ?? "").trim().split("\n")[0] ?? `exit ${c.status}`}`,
      };
    fs.chmodSync(path.join(tmp, opts.name), 0o700);
    try {
      fs.renameSync(tmp, dir);
    } catch (e) {
      // Another engine finished first: its build is the same bytes.
      if (!fs.existsSync(bin)) throw e;
    }
    return { path: bin, built: true };
  } catch (e) {
    return { path: null, reason: `building ${opts.what} failed: ${(e as Error).message}` };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
