import { execFile } from "node:child_process";
import { promisify } from "node:util";

const execFileP = promisify(execFile);

/**
 * Filesystem copies for snapshots and forks. This machine's ext4 has no reflink, so a snapshot is a
 * plain `cp -a` (about 110 ms per 50 MB, engine-notes §6). cp -a never follows a symlink the
 * sandbox planted (-d), keeps hard links, modes, times and xattrs, and copies fifos and sockets as
 * such.
 */
export async function copyTree(src: string, dst: string, asUid?: number): Promise<void> {
  // "src/." copies the contents (dotfiles included) into an existing dst. Reading a live sandbox's
  // tree, cp runs as that sandbox's uid: even a tree changing under it (no freezer) cannot make it
  // copy anything the sandbox could not read itself.
  const as = asUid === undefined ? {} : { uid: asUid, gid: asUid };
  await execFileP("cp", ["-a", "--", `${src}/.`, `${dst}/`], { maxBuffer: 1024 * 1024, ...as });
}

/**
 * Hands every entry under `dir` to host uid `uid` (a fork or a volume gets a new sandbox uid; inside
 * its user namespace only that uid maps to the sandbox user). -h changes symlinks themselves and -R
 * without -L never descends through one, so a planted link cannot redirect the chown.
 */
export async function chownTree(dir: string, uid: number): Promise<void> {
  await execFileP("chown", ["-R", "-h", `${uid}:${uid}`, "--", dir], { maxBuffer: 1024 * 1024 });
}

/**
 * Bytes the trees take now (du, 1 KiB blocks), read as `asUid` like the copy that follows, so a
 * sandbox's own tree is read with the sandbox's rights; null when du could not read all of them.
 */
export async function usageBytesAs(dirs: string[], asUid: number): Promise<number | null> {
  try {
    const { stdout } = await execFileP("du", ["-s", "-k", "-x", "--", ...dirs], { uid: asUid, gid: asUid });
    return stdout
      .split("\n")
      .filter(Boolean)
      .reduce((n, line) => n + Number(line.split(/\s/)[0] ?? 0) * 1024, 0);
  } catch {
    return null;
  }
}

/** Bytes a tree takes on disk (du, in 1 KiB blocks): what a snapshot or directory volume really costs. */
export async function diskUsageBytes(dir: string): Promise<number> {
  const { stdout } = await execFileP("du", ["-s", "-k", "-x", "--", dir]);
  return Number(stdout.split(/\s/)[0] ?? 0) * 1024;
}

/**
 * A RAM-backed scratch directory (tmpfs of at most `bytes`), in the engine's private mount
 * namespace: a snapshot's frozen copy lands here first, so the freeze never waits on the disk.
 */
export async function mountTmpfs(dir: string, bytes: number): Promise<void> {
  await execFileP("mount", ["-t", "tmpfs", "-o", `size=${bytes},mode=0700,nosuid,nodev`, "baton-snapshot", dir]);
}

export async function unmount(dir: string): Promise<void> {
  await execFileP("umount", [dir]).catch(() => execFileP("umount", ["-l", dir]).catch(() => undefined));
}
