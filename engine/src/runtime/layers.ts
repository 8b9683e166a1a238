import { execFile } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import type { Host } from "./host.js";
import { mountOverlay } from "./overlay.js";
import { ETC_RO } from "./sandbox-proc.js";
import type { BaseImage } from "./templates.js";

const execFileP = promisify(execFile);

/**
 * Custom template layers (issue 5). A sandbox of a built-in image sees a root filesystem put
 * together from pieces: host /usr, a few /etc files, runtimes such as pyenv's CPython at their
 * host paths, and an empty root. A template's layer records what its build steps changed in each
 * piece, as the upper directories of overlayfs mounts:
 *
 *   <root>/templates/<id>/layer/root   changes to / itself (/opt, /var, /root, /srv, ...)
 *   <root>/templates/<id>/layer/usr    changes to /usr
 *   <root>/templates/<id>/layer/etc    changes to /etc
 *   <root>/templates/<id>/layer/rt-*   changes to a runtime (pip installs into CPython's prefix)
 *
 * A build mounts each piece read-write (lower = what the base image shows, upper = the layer),
 * every layer idmapped so that the build's unprivileged host uid owns what the host's root owns
 * (runtime/overlay.ts); a sandbox of the template mounts each read-only (lowerdir = layer:base, no
 * upper), so no sandbox can change the template for another. Layers are named to overlayfs by
 * descriptor, so no host path shows in a sandbox's /proc/mounts. Every mount lives in the
 * engine's private mount namespace (engine-notes §6: bwrap 0.8 has no --overlay, so "stage 1"
 * mounts them before bwrap binds the result).
 */
export interface LayerPart {
  /** Directory name of this piece under layer/ and work/. */
  key: string;
  /** Where the sandbox sees it. */
  dest: string;
  /** What the base image shows there (the overlay's lowest layer). */
  lower: string;
}

/** Directories every template root filesystem has, so bwrap can mount onto them read-only. */
const SKELETON_DIRS = [
  "usr",
  "etc",
  "proc",
  "dev",
  "tmp",
  "workspace",
  "persist",
  "root",
  "opt",
  "var",
  "var/tmp",
  "home",
  "srv",
  "mnt",
  "run",
];
/** Files bwrap binds the engine's own copies over (fds 5-8 in sandbox-proc.ts): they must exist beforehand. */
const ETC_PLACEHOLDERS = ["passwd", "group", "hosts", "resolv.conf"];

/** The overlay mounter every template mount goes through (the host made sure it exists, else templates are unavailable). */
function overlayBin(host: Host): string {
  if (!host.overlay) throw new Error(`custom templates are unavailable: ${host.templates ?? "no overlay mounter"}`);
  return host.overlay.bin;
}

/** Unmounts, falling back to a lazy detach if something still holds the mount. */
async function unmount(target: string): Promise<void> {
  await execFileP("umount", [target]).catch(() => execFileP("umount", ["-l", target]).catch(() => undefined));
}

/** Where a part is mounted under a root (no trailing slash: mountinfo lists the root as "/x/view"). */
function mountTarget(root: string, part: LayerPart): string {
  return path.resolve(root, `.${part.dest}`);
}

function isMountPoint(p: string): boolean {
  try {
    const mounts = fs.readFileSync("/proc/self/mountinfo", "utf8");
    return mounts.split("\n").some((l) => l.split(" ")[4] === p);
  } catch {
    return false;
  }
}

const C = fs.constants;
/** A directory, never through a symlink in the last place (O_NOFOLLOW), nor waiting on a FIFO swapped in. */
const DIR_NOFOLLOW = C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW | C.O_NONBLOCK;
/**
 * openat(dirFd, name) for Node (as in services/files.ts): the kernel resolves /proc/self/fd/N to
 * exactly the directory the fd holds, whatever was renamed since; `name` is one component. Names
 * read back from the disk stay bytes (not every name is UTF-8).
 */
const at = (dirFd: number, name: string | Buffer) =>
  Buffer.concat([Buffer.from(`/proc/self/fd/${dirFd}/`), typeof name === "string" ? Buffer.from(name) : name]);
const errno = (e: unknown) => (e as NodeJS.ErrnoException).code;

/**
 * Empties `base`/`rel...` as root without ever following a symlink: each component is opened
 * relative to its parent's fd with O_NOFOLLOW|O_DIRECTORY, so a component that is a symlink (or
 * not a directory) ends the walk there; below it every entry is lstat'ed and only real
 * directories are descended into (opened the same way, so one swapped for a symlink meanwhile
 * fails the open and is unlinked as a link). `base` itself is the engine's own directory.
 * Unlike a path-based `rm -rf`, nothing in the tree (however arranged, however renamed while
 * it runs) can lead it to a file outside.
 */
async function emptyNoFollow(base: string, rel: string[]): Promise<void> {
  let dir: fsp.FileHandle;
  try {
    dir = await fsp.open(base, DIR_NOFOLLOW);
  } catch (e) {
    if (errno(e) === "ENOENT") return;
    throw e;
  }
  try {
    for (const name of rel) {
      let next: fsp.FileHandle;
      try {
        next = await fsp.open(at(dir.fd, name), DIR_NOFOLLOW);
      } catch (e) {
        // Missing, a symlink (ELOOP) or not a directory: nothing of ours to empty there.
        if (["ENOENT", "ELOOP", "ENOTDIR"].includes(errno(e) ?? "")) return;
        throw e;
      }
      await dir.close();
      dir = next;
    }
    await emptyFd(dir.fd);
  } finally {
    await dir.close();
  }
}

async function emptyFd(dirFd: number): Promise<void> {
  for (const name of await fsp.readdir(`/proc/self/fd/${dirFd}`, { encoding: "buffer" })) {
    const entry = at(dirFd, name);
    const st = await fsp.lstat(entry).catch((e: unknown) => (errno(e) === "ENOENT" ? null : Promise.reject(e)));
    if (!st) continue;
    if (st.isDirectory()) {
      let sub: fsp.FileHandle | null = null;
      try {
        sub = await fsp.open(entry, DIR_NOFOLLOW);
      } catch (e) {
        if (errno(e) !== "ELOOP" && errno(e) !== "ENOTDIR") throw e;
      }
      if (sub) {
        try {
          await emptyFd(sub.fd);
        } finally {
          await sub.close();
        }
        await fsp.rmdir(entry);
        continue;
      }
    }
    // unlink never follows a symlink: the link itself goes (and so does a whiteout, a plain file, a fifo).
    await fsp.unlink(entry).catch((e: unknown) => (errno(e) === "ENOENT" ? undefined : Promise.reject(e)));
  }
}

export class TemplateLayers {
  /** Where each base image's skeleton and /etc copy are, built once per engine run. */
  private bases = new Map<string, Promise<LayerPart[]>>();
  private etcBase: Promise<string> | null = null;

  constructor(
    /** `<engine root>/templates`. */
    readonly dir: string,
    private readonly host: Host,
  ) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o711 });
    fs.chmodSync(dir, 0o711);
  }

  templateDir(id: string): string {
    return path.join(this.dir, id);
  }

  /** The read-write root of a running build. */
  buildRoot(id: string): string {
    return path.join(this.templateDir(id), "rw");
  }

  /** The shared read-only root sandboxes of the template bind (mounted while any uses it). */
  viewRoot(id: string): string {
    return path.join(this.templateDir(id), "view");
  }

  /** Scratch (/workspace, /tmp) of the build sandbox. */
  buildScratch(id: string): string {
    return path.join(this.templateDir(id), "build");
  }

  private layer(id: string, key: string): string {
    return path.join(this.templateDir(id), "layer", key);
  }

  private work(id: string, key: string): string {
    return path.join(this.templateDir(id), "work", key);
  }

  /**
   * The host's /etc files sandboxes see (sandbox-proc.ts ETC_RO), copied so that an overlay can use
   * them as its lower layer without exposing the rest of the host's /etc (shadow, ssh keys).
   * Refreshed at the first use of each engine run, when nothing is mounted on it yet.
   */
  private ensureEtcBase(): Promise<string> {
    this.etcBase ??= (async () => {
      const target = path.join(this.dir, ".base", "etc");
      const fresh = `${target}.new`;
      await fsp.rm(fresh, { recursive: true, force: true });
      await fsp.mkdir(fresh, { recursive: true, mode: 0o755 });
      const present = ETC_RO.filter((n) => fs.existsSync(`/etc/${n}`)).map((n) => `/etc/${n}`);
      if (present.length) await execFileP("cp", ["-a", "--", ...present, fresh]);
      for (const f of ETC_PLACEHOLDERS) await fsp.writeFile(path.join(fresh, f), "", { mode: 0o644 });
      await fsp.rm(target, { recursive: true, force: true });
      await fsp.rename(fresh, target);
      return target;
    })();
    return this.etcBase;
  }

  /** The pieces of a base image's root filesystem, outermost first (the order they are mounted in). */
  parts(image: BaseImage): Promise<LayerPart[]> {
    let p = this.bases.get(image.id);
    if (!p) {
      p = (async () => {
        const etc = await this.ensureEtcBase();
        const skeleton = path.join(this.dir, ".base", image.id);
        if (!fs.existsSync(skeleton)) {
          const fresh = `${skeleton}.new`;
          await fsp.rm(fresh, { recursive: true, force: true });
          await fsp.mkdir(fresh, { recursive: true, mode: 0o755 });
          for (const d of SKELETON_DIRS) await fsp.mkdir(path.join(fresh, d), { recursive: true, mode: 0o755 });
          await fsp.chmod(path.join(fresh, "tmp"), 0o1777);
          await fsp.chmod(path.join(fresh, "var/tmp"), 0o1777);
          for (const [link, to] of [
            ["bin", "usr/bin"],
            ["sbin", "usr/sbin"],
            ["lib", "usr/lib"],
            ["lib64", "usr/lib64"],
            ["lib32", "usr/lib32"],
          ] as const) {
            if (link === "bin" || link === "sbin" || link === "lib" || fs.existsSync(`/${to}`))
              await fsp.symlink(to, path.join(fresh, link));
          }
          // Runtimes are mounted at their host paths (their RUNPATHs are absolute): the skeleton holds the mount points.
          for (const b of image.binds) await fsp.mkdir(path.join(fresh, b.dest), { recursive: true, mode: 0o755 });
          await fsp.rename(fresh, skeleton);
        }
        const parts: LayerPart[] = [
          { key: "root", dest: "/", lower: skeleton },
          { key: "usr", dest: "/usr", lower: "/usr" },
          { key: "etc", dest: "/etc", lower: etc },
        ];
        for (const b of image.binds)
          parts.push({
            key: `rt-${b.dest.replace(/[^A-Za-z0-9.-]+/g, "_")}`,
            dest: b.dest,
            lower: this.host.runtimeSource(b),
          });
        return parts;
      })();
      p.catch(() => this.bases.delete(image.id));
      this.bases.set(image.id, p);
    }
    return p;
  }

  /** Empty upper and work directories for a new build (root-only: sandboxes reach them through mounts only). */
  async prepare(id: string, image: BaseImage): Promise<void> {
    const dir = this.templateDir(id);
    await fsp.mkdir(dir, { recursive: true, mode: 0o711 });
    for (const sub of ["layer", "work"]) {
      await fsp.rm(path.join(dir, sub), { recursive: true, force: true });
      await fsp.mkdir(path.join(dir, sub), { mode: 0o700 });
    }
    for (const part of await this.parts(image)) {
      await fsp.mkdir(this.layer(id, part.key), { mode: 0o755 });
      await fsp.mkdir(this.work(id, part.key), { mode: 0o700 });
    }
  }

  /**
   * Mounts the build's read-write root, its layers idmapped for the build's host uid `uid` (the
   * host's root-owned files appear owned by it); the returned function unmounts it again.
   */
  async mountWritable(
    id: string,
    image: BaseImage,
    uid: number,
  ): Promise<{ root: string; unmount: () => Promise<void> }> {
    if (!this.host.overlay?.idmap) throw new Error(`custom templates are unavailable: ${this.host.templates}`);
    const root = this.buildRoot(id);
    await fsp.mkdir(root, { recursive: true, mode: 0o755 });
    const mounted: string[] = [];
    const undo = async () => {
      for (const m of mounted.reverse()) await unmount(m);
      mounted.length = 0;
    };
    try {
      for (const part of await this.parts(image)) {
        const target = mountTarget(root, part);
        await mountOverlay(overlayBin(this.host), {
          target,
          lowers: [part.lower],
          upper: { dir: this.templateDir(id), upper: `layer/${part.key}`, work: `work/${part.key}` },
          idmap: uid,
        });
        mounted.push(target);
      }
    } catch (e) {
      await undo();
      throw e;
    }
    return { root, unmount: undo };
  }

  /** Mounts the template's read-only root for sandboxes. */
  async mountView(id: string, image: BaseImage): Promise<string> {
    const root = this.viewRoot(id);
    await fsp.mkdir(root, { recursive: true, mode: 0o755 });
    const mounted: string[] = [];
    try {
      for (const part of await this.parts(image)) {
        const target = mountTarget(root, part);
        // Two lower layers and no upper: overlayfs mounts it read-only.
        await mountOverlay(overlayBin(this.host), { target, lowers: [this.layer(id, part.key), part.lower] });
        mounted.push(target);
      }
    } catch (e) {
      for (const m of mounted.reverse()) await unmount(m);
      throw e;
    }
    return root;
  }

  /**
   * Whether the template's view is mounted, every part of it: after a restart, in the mount
   * namespace the sandboxes' holders kept (server.ts), where an adopted sandbox still runs on it.
   */
  async viewMounted(id: string, image: BaseImage): Promise<boolean> {
    const parts = await this.parts(image).catch(() => null);
    return !!parts?.length && parts.every((part) => isMountPoint(mountTarget(this.viewRoot(id), part)));
  }

  async unmountView(id: string, image: BaseImage): Promise<void> {
    const root = this.viewRoot(id);
    const parts = await this.parts(image).catch(() => [] as LayerPart[]);
    for (const part of [...parts].reverse()) {
      const target = mountTarget(root, part);
      if (isMountPoint(target)) await unmount(target);
    }
    // The empty mount point goes too; a template not in use holds only its layer.
    await fsp.rmdir(root).catch(() => undefined);
  }

  /**
   * After a successful build: drop caches that only made the build faster (pip, apt archives),
   * as the hosted service scrubs its images, and the overlay work directories. The layer is the
   * build's own writing: where any of these paths runs through a symlink (`/var` → a host
   * directory) it is left alone, never followed (emptyNoFollow).
   */
  async scrub(id: string): Promise<void> {
    const rootLayer = this.layer(id, "root");
    for (const p of ["root/.cache", "var/cache/apt/archives", "var/lib/apt/lists", "tmp", "var/tmp"]) {
      // The directory itself stays (with its opaque marker, if any): only what is in it goes.
      await emptyNoFollow(rootLayer, p.split("/"));
    }
    await this.dropBuildLeftovers(id);
  }

  /**
   * Removes what only a build needs (work dirs, scratch, mount point). Runs once the build's
   * processes are gone and its mounts released: overlay work dirs and empty mount points are all
   * that is left there, nothing a step wrote.
   */
  async dropBuildLeftovers(id: string): Promise<void> {
    const dir = this.templateDir(id);
    if (isMountPoint(this.buildRoot(id))) return; // still mounted: never delete through a mount
    for (const sub of ["work", "rw", "build"]) await fsp.rm(path.join(dir, sub), { recursive: true, force: true });
  }

  /**
   * Space the layer takes on disk, in MB (du counts whiteouts and directories too). It runs while
   * steps write the layer: du never follows a symlink (-P), walks by directory fd, and -x keeps it
   * on the layer's filesystem, so what a step plants cannot make it count anything else.
   */
  async sizeMb(id: string): Promise<number> {
    const layer = path.join(this.templateDir(id), "layer");
    const { stdout } = await execFileP("du", ["-s", "-k", "-P", "-x", "--", layer]);
    return Math.round((Number(stdout.split(/\s/)[0]) / 1024) * 100) / 100;
  }

  /**
   * Deletes a template's files; refuses while anything is mounted under it. The layer holds what
   * the build wrote, symlinks to anywhere included: it goes by the same no-follow walk as the scrub.
   */
  async remove(id: string): Promise<void> {
    const dir = this.templateDir(id);
    const mounts = fs
      .readFileSync("/proc/self/mountinfo", "utf8")
      .split("\n")
      .map((l) => l.split(" ")[4] ?? "");
    if (mounts.some((m) => m === dir || m.startsWith(dir + "/")))
      throw new Error(`template ${id} still has mounts under ${dir}`);
    if (!fs.existsSync(dir)) return;
    await emptyNoFollow(dir, []);
    await fsp.rmdir(dir);
  }
}
