import { execFile } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import type { Host } from "./host.js";
import { chownTree, diskUsageBytes } from "./tree-copy.js";

const execFileP = promisify(execFile);
const MiB = 1024 * 1024;

/**
 * How volumes are stored on this machine:
 * - `loop-ext4`: one sparse ext4 image per volume, loop-mounted in the engine's private mount
 *   namespace while a sandbox holds it. The image size *is* the quota: a write past it fails with
 *   ENOSPC inside the sandbox, and no volume can see or hard-link another's files.
 * - `directory`: a plain host directory (no root, no private mount namespace, or no loop tools);
 *   the size is then only recorded, not enforced, and the volume view says so.
 */
export type VolumeBackend = "loop-ext4" | "directory";

function have(bin: string): boolean {
  return ["/usr/sbin", "/sbin", "/usr/bin", "/bin"].some((d) => fs.existsSync(path.join(d, bin)));
}

export function detectVolumeBackend(host: Host): { backend: VolumeBackend; reason: string | null } {
  // scratchTmpfs means "root inside a private mount namespace": mounts made there vanish with the engine.
  if (!host.scratchTmpfs)
    return {
      backend: "directory",
      reason: "the engine is not root in a private mount namespace, so it cannot loop-mount volume images",
    };
  const missing = ["mkfs.ext4", "e2fsck", "resize2fs", "mount", "umount"].filter((b) => !have(b));
  if (missing.length) return { backend: "directory", reason: `missing ${missing.join(", ")} (e2fsprogs / util-linux)` };
  if (!fs.existsSync("/dev/loop-control"))
    return { backend: "directory", reason: "no /dev/loop-control: the kernel offers no loop devices" };
  return { backend: "loop-ext4", reason: null };
}

/**
 * The volumes' bytes on the host: `<root>/volumes/images/<region>/<id>.img` (or `.dir`), owner-only,
 * mounted at `<root>/volumes/mnt/<id>` while attached. Region directories make a move a real copy.
 */
export class VolumeStore {
  private readonly base: string;
  private readonly mounted = new Set<string>();

  constructor(
    root: string,
    readonly backend: VolumeBackend,
    /** Bytes one "GB" of size_gb stands for (1 GiB, or less under the test knob). */
    private readonly gbBytes: number,
  ) {
    this.base = path.join(root, "volumes");
    // Sandbox uids must traverse to what bwrap binds as them: the mount points, or for directory
    // volumes the directories themselves. Images stay closed to everyone but the engine.
    const imagesMode = backend === "directory" ? 0o711 : 0o700;
    fs.mkdirSync(path.join(this.base, "images"), { recursive: true, mode: imagesMode });
    fs.mkdirSync(path.join(this.base, "mnt"), { recursive: true, mode: 0o711 });
    fs.chmodSync(this.base, 0o711);
    fs.chmodSync(path.join(this.base, "images"), imagesMode);
    fs.chmodSync(path.join(this.base, "mnt"), 0o711);
  }

  get sizeEnforced(): boolean {
    return this.backend === "loop-ext4";
  }

  dataPath(region: string, id: string): string {
    return path.join(this.base, "images", region, `${id}${this.backend === "loop-ext4" ? ".img" : ".dir"}`);
  }

  /** Where the sandbox's bwrap binds /persist from while the volume is attached. */
  private mountPoint(region: string, id: string): string {
    return this.backend === "loop-ext4" ? path.join(this.base, "mnt", id) : this.dataPath(region, id);
  }

  private async regionDir(region: string): Promise<string> {
    const dir = path.join(this.base, "images", region);
    // Directory volumes are bound straight from here, so sandbox uids must be able to pass through.
    await fsp.mkdir(dir, { recursive: true, mode: this.backend === "directory" ? 0o711 : 0o700 });
    return dir;
  }

  /** A fresh, empty volume: a sparse image holding a new ext4 (a few MB on disk whatever its size). */
  async create(region: string, id: string, sizeGb: number): Promise<void> {
    await this.regionDir(region);
    const target = this.dataPath(region, id);
    if (this.backend === "directory") {
      await fsp.mkdir(target, { mode: 0o700 });
      return;
    }
    const fh = await fsp.open(target, "wx", 0o600);
    try {
      await fh.truncate(sizeGb * this.gbBytes);
    } finally {
      await fh.close();
    }
    // -m 0: no blocks reserved for root, the sandbox user gets the whole size.
    await execFileP("mkfs.ext4", ["-q", "-F", "-m", "0", "-L", id.slice(-16), "-E", "root_owner=0:0", target]).catch(
      async (e: Error) => {
        await fsp.rm(target, { force: true });
        throw new Error(`mkfs.ext4 failed: ${e.message}`);
      },
    );
  }

  /**
   * Mounts the volume for a sandbox running as host uid `uid` and returns the host path to bind at
   * /persist. Everything on it is handed to that uid when the previous holder had another.
   */
  async attach(region: string, id: string, uid: number, previousUid: number | null): Promise<string> {
    const mnt = this.mountPoint(region, id);
    if (this.backend === "loop-ext4") {
      await fsp.mkdir(mnt, { recursive: true, mode: 0o700 });
      await execFileP("mount", ["-t", "ext4", "-o", "loop,nosuid,nodev,noatime", this.dataPath(region, id), mnt]);
      this.mounted.add(id);
    }
    try {
      if (previousUid !== uid) await chownTree(mnt, uid);
      else await fsp.chown(mnt, uid, uid);
      await fsp.chmod(mnt, 0o700);
    } catch (e) {
      await this.detach(region, id);
      throw e;
    }
    return mnt;
  }

  /** Space used on the volume now (statfs of the mounted ext4, or du of a directory). */
  async usedBytes(region: string, id: string): Promise<number | null> {
    if (this.backend === "directory") return diskUsageBytes(this.dataPath(region, id)).catch(() => null);
    if (!this.mounted.has(id)) return null;
    const st = await fsp.statfs(this.mountPoint(region, id)).catch(() => null);
    return st ? (st.blocks - st.bfree) * st.bsize : null;
  }

  /**
   * Unmounts a loop-mounted volume; the loop device goes with it (mount -o loop sets autoclear). The
   * sandbox must be dead by now, so nothing holds the filesystem; a lazy unmount is the fallback.
   */
  async detach(region: string, id: string): Promise<void> {
    if (this.backend === "directory" || !this.mounted.has(id)) return;
    const mnt = this.mountPoint(region, id);
    await execFileP("umount", [mnt]).catch(() => execFileP("umount", ["-l", mnt]).catch(() => undefined));
    this.mounted.delete(id);
    await fsp.rmdir(mnt).catch(() => undefined);
  }

  /**
   * Space used on a detached volume, by mounting it for a moment (which also replays the journal
   * of one whose engine died while it was mounted). Null where that is not possible.
   */
  async measure(region: string, id: string): Promise<number | null> {
    if (this.backend === "directory") return diskUsageBytes(this.dataPath(region, id)).catch(() => null);
    if (this.mounted.has(id)) return this.usedBytes(region, id);
    const mnt = this.mountPoint(region, id);
    try {
      await fsp.mkdir(mnt, { recursive: true, mode: 0o700 });
      await execFileP("mount", [
        "-t",
        "ext4",
        "-o",
        "loop,nosuid,nodev,noexec,noatime",
        this.dataPath(region, id),
        mnt,
      ]);
      this.mounted.add(id);
      return await this.usedBytes(region, id);
    } catch {
      return null;
    } finally {
      await this.detach(region, id);
      await fsp.rmdir(mnt).catch(() => undefined);
    }
  }

  /**
   * After a restart: the volume an adopted sandbox holds is still mounted in the namespace its
   * holder kept (server.ts). It is tracked as mounted again, so detach unmounts it; false when the
   * mount is gone.
   */
  adoptMount(region: string, id: string): boolean {
    if (this.backend === "directory") return fs.existsSync(this.dataPath(region, id));
    const mnt = this.mountPoint(region, id);
    let table = "";
    try {
      table = fs.readFileSync("/proc/self/mountinfo", "utf8");
    } catch {
      return false;
    }
    if (!table.split("\n").some((l) => l.split(" ")[4] === mnt)) return false;
    this.mounted.add(id);
    return true;
  }

  /** Where an attached volume is mounted (the restart's sweep of leftover mounts keeps it). */
  mountPath(region: string, id: string): string {
    return this.mountPoint(region, id);
  }

  isMounted(id: string): boolean {
    return this.mounted.has(id);
  }

  /** Grows a detached volume: a longer sparse image, then an offline ext4 resize (needs a clean fsck). */
  async grow(region: string, id: string, sizeGb: number): Promise<void> {
    if (this.backend === "directory") return;
    const image = this.dataPath(region, id);
    await fsp.truncate(image, sizeGb * this.gbBytes);
    // e2fsck exits 1 when it fixed something, which is fine; 2 and up are real trouble.
    await execFileP("e2fsck", ["-f", "-p", image]).catch((e: { code?: number; message: string }) => {
      if (e.code !== 1) throw new Error(`e2fsck before resize failed: ${e.message}`);
    });
    await execFileP("resize2fs", [image]);
  }

  /**
   * Moves a detached volume to another region's directory by copying it (sparse), then dropping
   * the original: what a cross-region move is, on one machine. A crash leaves either the original
   * or the finished copy, never a half-copy under the final name.
   */
  async move(id: string, from: string, to: string): Promise<void> {
    await this.regionDir(to);
    const src = this.dataPath(from, id);
    const dst = this.dataPath(to, id);
    const partial = `${dst}.partial`;
    await fsp.rm(partial, { recursive: true, force: true });
    await execFileP("cp", ["-a", "--sparse=always", src, partial]);
    await fsp.rename(partial, dst);
    await fsp.rm(src, { recursive: true, force: true });
  }

  /** Finishes or rolls back a move an earlier engine run was doing when it stopped. */
  async recoverMove(id: string, from: string, to: string): Promise<"moved" | "rolled_back"> {
    const dst = this.dataPath(to, id);
    await fsp.rm(`${dst}.partial`, { recursive: true, force: true });
    if (fs.existsSync(dst)) {
      await fsp.rm(this.dataPath(from, id), { recursive: true, force: true });
      return "moved";
    }
    return "rolled_back";
  }

  async remove(region: string, id: string): Promise<void> {
    await this.detach(region, id);
    await fsp.rm(this.dataPath(region, id), { recursive: true, force: true });
  }

  /** Mount points left by an engine that stopped uncleanly (their mounts died with its namespace). */
  async sweepStaleMountPoints(): Promise<void> {
    if (this.backend !== "loop-ext4") return;
    for (const name of await fsp.readdir(path.join(this.base, "mnt")).catch(() => [] as string[])) {
      if (!this.mounted.has(name)) await fsp.rmdir(path.join(this.base, "mnt", name)).catch(() => undefined);
    }
  }

  /** Unmounts everything still mounted (engine shutdown; sandboxes are already gone). */
  async close(
    regionOf: (id: string) => string | undefined,
    keep: (id: string) => boolean = () => false,
  ): Promise<void> {
    for (const id of [...this.mounted]) if (!keep(id)) await this.detach(regionOf(id) ?? "", id);
  }

  static bytesPerGb(unitMb: number): number {
    return unitMb * MiB;
  }
}
