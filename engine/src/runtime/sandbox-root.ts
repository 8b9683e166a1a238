import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { EngineConfig } from "../config.js";

/**
 * Where sandbox uids find the engine's tree. bwrap runs as each sandbox's unprivileged uid and opens
 * its binds itself (sbx/<id>/{workspace,tmp}, rt/ runtimes, template views, volume mounts), and the
 * relays and snapshot copies run as that uid too: every directory above `<data>/engine` must be
 * searchable by other users. A checkout in root's home (/root is 0700) or any BATON_DATA_DIR below a
 * 0700 directory is not, and every create used to fail with bwrap's "Can't find source path ...:
 * Permission denied".
 *
 * Then the engine binds `<data>/engine` onto TRAVERSABLE_BASE/<hash of the data dir> inside its own
 * private mount namespace (server.ts re-executes itself in one) and works from there: the files stay
 * in BATON_DATA_DIR (SQLite, secrets, volumes, templates and snapshots persist across restarts as
 * before), nothing is mounted on the host, the mount goes away with the engine, and every restart
 * binds again. Engines with other data dirs get other hashes, so several run side by side. The data
 * dir and its parents keep their modes: the engine never loosens a directory it does not own.
 */
export const TRAVERSABLE_BASE = "/run/baton-engine";

/**
 * Whether host uid `uid` (a stand-in for any sandbox uid: none of them is in a group with access)
 * can enter `dir`, tried for real: ACLs, mount options and LSMs all count, not just mode bits.
 */
export function canTraverse(dir: string, uid: number): boolean {
  const r = spawnSync("/bin/sh", ["-c", 'cd -- "$1"', "sh", dir], { uid, gid: uid, stdio: "ignore", timeout: 5000 });
  return r.status === 0;
}

/** The first directory on the way to `dir` that other users cannot search, with its mode. */
export function blockingAncestor(dir: string): { dir: string; mode: string } | null {
  const parts = path.resolve(dir).split(path.sep).filter(Boolean);
  for (let i = 0; i <= parts.length; i++) {
    const p = path.sep + parts.slice(0, i).join(path.sep);
    try {
      const mode = fs.statSync(p).mode & 0o7777;
      if ((mode & 0o001) === 0) return { dir: p, mode: mode.toString(8).padStart(4, "0") };
    } catch {
      return null;
    }
  }
  return null;
}

/** One sentence saying why sandbox uids cannot reach `root` and what to change, or null when they can. */
export function sandboxRootProblem(root: string, uid: number): string | null {
  if (canTraverse(root, uid)) return null;
  const b = blockingAncestor(root);
  const where = b ? `${b.dir} is mode ${b.mode}` : "a directory on the way is not searchable";
  return `sandbox uids cannot reach ${root} (${where}): set BATON_DATA_DIR to a directory every user can traverse (e.g. /var/lib/baton) or chmod o+x ${b?.dir ?? "its parents"}`;
}

export interface SandboxRoot {
  /** Where the engine works from. */
  root: string;
  /** At shutdown, after everything below it is unmounted: drops the bind and its mount point. */
  release(): void;
}

/**
 * The root the engine should work from: `<data>/engine` itself when sandbox uids can reach it, else
 * its bind mount under TRAVERSABLE_BASE. Throws one sentence when neither works (the engine then
 * refuses to start rather than fail every create).
 */
export function prepareSandboxRoot(
  config: EngineConfig,
  opts: { inPrivateMountNs: boolean; log: (msg: string) => void },
): SandboxRoot {
  const root = config.root;
  const asIs = { root, release: () => undefined };
  fs.mkdirSync(root, { recursive: true, mode: 0o711 });
  if (process.getuid?.() !== 0) return asIs;
  makeEngineDirsSearchable(config.dataDir, root);
  const probeUid = config.uidBase - 1;
  const problem = sandboxRootProblem(root, probeUid);
  if (!problem) return asIs;
  if (!opts.inPrivateMountNs) {
    throw new Error(
      `${problem}; outside a private mount namespace (util-linux unshare) the engine cannot bind it elsewhere`,
    );
  }
  const target = path.join(
    TRAVERSABLE_BASE,
    createHash("sha256").update(fs.realpathSync(config.dataDir)).digest("hex").slice(0, 16),
  );
  try {
    ensureRootOwnedDir(TRAVERSABLE_BASE);
    fs.mkdirSync(target, { recursive: true, mode: 0o711 });
    // A restarted engine in the namespace its sandboxes' holders kept (server.ts) finds it bound.
    if (!sameDirectory(root, target))
      execFileSync("mount", ["--bind", root, target], { stdio: ["ignore", "ignore", "pipe"] });
  } catch (e) {
    throw new Error(
      `${problem}; binding it at ${target} failed: ${((e as { stderr?: Buffer }).stderr?.toString() || (e as Error).message).trim()}`,
    );
  }
  const still = sandboxRootProblem(target, probeUid);
  if (still) throw new Error(`${problem}; its bind at ${target} is not reachable either (${still})`);
  opts.log(
    `sandbox tree: ${root} is not reachable by sandbox uids, so the engine works from its bind mount at ${target} (private to the engine's mount namespace)`,
  );
  return {
    root: target,
    release() {
      // The mount would go with the namespace anyway; the empty mount point is on the host.
      spawnSync("umount", [target], { stdio: "ignore" });
      try {
        fs.rmdirSync(target);
      } catch {
        /* still busy, or another engine of the same data dir uses it */
      }
    },
  };
}

/** Whether two paths name one directory (the same device and inode), e.g. a bind and its source. */
export function sameDirectory(a: string, b: string): boolean {
  try {
    const x = fs.statSync(a);
    const y = fs.statSync(b);
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

/**
 * The data dir and the engine dir are the engine's own: other users may search them (o+x, not
 * read), as the engine always did. Directories above them are never changed.
 */
export function makeEngineDirsSearchable(dataDir: string, root: string): void {
  for (const dir of [dataDir, root]) {
    const st = fs.statSync(dir);
    if ((st.mode & 0o001) === 0) fs.chmodSync(dir, (st.mode & 0o7777) | 0o111);
  }
  fs.chmodSync(root, 0o711);
}

/** TRAVERSABLE_BASE must be root's alone (0711): nobody else may swap what sandboxes bind. */
function ensureRootOwnedDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o711 });
  const st = fs.lstatSync(dir);
  if (!st.isDirectory() || st.uid !== 0) throw new Error(`${dir} is not a directory owned by root`);
  if ((st.mode & 0o7777) !== 0o711) fs.chmodSync(dir, 0o711);
}
