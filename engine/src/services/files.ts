import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import { ApiError } from "../errors.js";
import { iso } from "../lib/time.js";
import { sandboxDirs, type SandboxSpec } from "../runtime/sandbox-proc.js";
import { joinApi, normalizeApiPath, REACH } from "./files/paths.js";

export { decodeContent, parseMode } from "./files/codecs.js";
export { normalizeApiPath } from "./files/paths.js";
export { sign, verifySigned, type SignedParams } from "./files/presign.js";

/**
 * File access for one sandbox (/v1/sandboxes/:id/files and files/raw), done by the engine as root on the sandbox's host
 * directories. The sandbox user owns and controls everything under /workspace and /tmp, so every
 * path is walked one component at a time through directory fds, never re-resolved from a string:
 *
 * - Node has no openat(), so `/proc/self/fd/<dirfd>/<name>` stands in for it: the kernel resolves
 *   the magic link to the exact directory the fd holds, whatever was renamed or swapped since.
 * - Each component is lstat'ed; directories are opened O_DIRECTORY|O_NOFOLLOW, so a symlink
 *   swapped in after the lstat fails the open instead of being followed.
 * - Symlinks the sandbox made are followed the way the sandbox itself sees them: an absolute
 *   target such as `/workspace/data` means the sandbox's own /workspace, not the host's. A target
 *   outside the reachable mounts (`/etc`, `/`, another sandbox's directory) is 400 invalid_path.
 * - Every fd opened is checked with readlink(/proc/self/fd/N) to still be inside the mount root.
 * - Files and directories the engine creates are fchown'ed to the sandbox uid and fchmod'ed to
 *   the requested mode, so the sandbox sees them as its own (and umask plays no part).
 */

/** Largest file the JSON API reads or writes (decoded); bigger ones go through files/raw. */
export const MAX_JSON_FILE_BYTES = 10 * 1024 * 1024;
/** Largest total (decoded) of one files/batch request. */
export const MAX_BATCH_BYTES = 25 * 1024 * 1024;
/** Same bound as the kernel's: a symlink loop ends in invalid_path, not a hang. */
const MAX_SYMLINK_HOPS = 40;
/** Entries one directory listing returns at most. */
export const MAX_LIST_ENTRIES = 10_000;
/** Tries for steps a concurrently writing sandbox can race (mkdir, rmdir of a refilled dir). */
const RACE_RETRIES = 5;

const C = fs.constants;
const DIR_FLAGS = C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW | C.O_NONBLOCK;

/** The fd-relative stand-in for openat(dirfd, name). `name` never contains a slash. */
const at = (dirFd: number, name: string) => `/proc/self/fd/${dirFd}/${name}`;
/** The same for names read back from the disk, kept as bytes: not every name is valid UTF-8. */
const atRaw = (dirFd: number, name: Buffer) => Buffer.concat([Buffer.from(`/proc/self/fd/${dirFd}/`), name]);

const errno = (e: unknown): string | undefined => (e as NodeJS.ErrnoException | null)?.code;

function closeQuietly(fd: number | null | undefined): void {
  if (fd == null) return;
  try {
    fs.closeSync(fd);
  } catch {
    /* already closed */
  }
}

// ---------------------------------------------------------------------------------------------
// The sandbox's file tree

interface Mount {
  /** Where the sandbox sees it, e.g. /workspace. */
  at: string;
  /** Host directory bound there. */
  host: string;
  /** realpath of `host`, what /proc/self/fd readlinks must stay under. */
  real: string;
}

/** A path resolved to "entry `name` in the directory held by `dirFd`". The caller closes dirFd. */
interface Resolved {
  dirFd: number;
  name: string;
  /** Sandbox path of the entry after following symlinks. */
  path: string;
  mount: Mount;
  /** The entry is the mount root itself (dirFd is then the trusted, engine-owned parent). */
  isRoot: boolean;
}

export interface DirEntry {
  name: string;
  path: string;
  is_dir: boolean;
  /** Extra to the contract: "file", "directory", "symlink" or "other". */
  type: "file" | "directory" | "symlink" | "other";
  size: number;
  modified_at: string;
}

export type ReadResult =
  | { type: "file"; size: number; content: Buffer; modified_at: string }
  | { type: "directory"; entries: DirEntry[]; truncated: boolean };

export interface OpenedFile {
  fd: number;
  size: number;
  name: string;
  modified_at: string;
}

function entryType(st: fs.Stats): DirEntry["type"] {
  if (st.isSymbolicLink()) return "symlink";
  if (st.isDirectory()) return "directory";
  if (st.isFile()) return "file";
  return "other";
}

export class SandboxFiles {
  private readonly mounts: Mount[];
  private readonly uid: number;

  constructor(spec: Pick<SandboxSpec, "dir" | "uid" | "binds">) {
    const dirs = sandboxDirs(spec.dir);
    const list = [
      { at: "/workspace", host: dirs.workspace },
      { at: "/tmp", host: dirs.tmp },
      // Extra binds (a volume at /persist) are reachable where the sandbox sees them.
      ...(spec.binds ?? []).map((b) => ({ at: normalizeApiPath(b.dest), host: b.src })),
    ];
    // Longest prefix first, so a mount nested in another wins.
    this.mounts = list.map((m) => ({ ...m, real: fs.realpathSync(m.host) })).sort((a, b) => b.at.length - a.at.length);
    this.uid = spec.uid;
  }

  /** The mount holding a canonical sandbox path, and the components below its root. */
  locate(p: string, via?: string): { mount: Mount; parts: string[] } {
    for (const m of this.mounts) {
      if (p === m.at || p.startsWith(m.at + "/"))
        return { mount: m, parts: p.slice(m.at.length).split("/").filter(Boolean) };
    }
    const reach = this.mounts
      .map((m) => m.at)
      .sort()
      .join(" and ");
    if (via)
      throw new ApiError(
        "invalid_path",
        `${via} is a symlink leading to "${p}", outside the sandbox directories the file API reaches (${reach})`,
      );
    throw new ApiError(
      "invalid_path",
      `Path "${p}" is outside the file API's reach. ${REACH}${reach === "/tmp and /workspace" ? "" : ` (here: ${reach})`}.`,
    );
  }

  /** True for /workspace, /tmp and other mount roots, which are never deleted. */
  isMountRoot(p: string): boolean {
    return this.mounts.some((m) => m.at === p);
  }

  /** Throws unless the open fd still lies inside the mount root (defends against swaps). */
  private assertInside(fd: number, mount: Mount, apiPath: string): void {
    const real = fs.readlinkSync(`/proc/self/fd/${fd}`);
    if (real !== mount.real && !real.startsWith(mount.real + "/")) {
      throw new ApiError(
        "invalid_path",
        `"${apiPath}" changed while it was being opened and now leads outside ${mount.at}`,
      );
    }
  }

  private openDir(p: string | Buffer, mount: Mount, apiPath: string): number {
    const fd = fs.openSync(p, DIR_FLAGS);
    try {
      this.assertInside(fd, mount, apiPath);
      return fd;
    } catch (e) {
      closeQuietly(fd);
      throw e;
    }
  }

  /** mkdir that leaves a directory the sandbox owns with exactly `mode`. */
  private mkdirAt(dirFd: number, name: string, mount: Mount, apiPath: string, mode = 0o755): void {
    fs.mkdirSync(at(dirFd, name), 0o700);
    const fd = this.openDir(at(dirFd, name), mount, apiPath);
    try {
      fs.fchownSync(fd, this.uid, this.uid);
      fs.fchmodSync(fd, mode);
    } finally {
      closeQuietly(fd);
    }
  }

  /**
   * Walks `apiPath` (canonical) to its last component, following symlinks in sandbox terms.
   * `create` makes missing parent directories; `followFinal` follows a symlink in the last place.
   */
  private resolve(apiPath: string, opts: { create: boolean; followFinal: boolean }): Resolved {
    let current = apiPath;
    let via: string | undefined;
    let hops = 0;
    const follow = (dir: string, name: string, dirFd: number, rest: string[]) => {
      const target = readLinkOf(at(dirFd, name), apiPath);
      if (++hops > MAX_SYMLINK_HOPS)
        throw new ApiError("invalid_path", `Too many levels of symlinks resolving "${apiPath}"`);
      via = `"${joinApi(dir, name)}"`;
      const base = target.startsWith("/") ? target : path.posix.join(dir, target);
      current = path.posix.normalize([base, ...rest].join("/"));
      if (current.length > 1 && current.endsWith("/")) current = current.slice(0, -1);
    };

    for (;;) {
      const { mount, parts } = this.locate(current, via);
      if (parts.length === 0) {
        // The mount root: its parent is engine-owned, so the sandbox cannot swap the root itself.
        const dirFd = fs.openSync(path.dirname(mount.host), DIR_FLAGS);
        return { dirFd, name: path.basename(mount.host), path: mount.at, mount, isRoot: true };
      }
      let dirFd = this.openDir(mount.host, mount, current);
      let dir = mount.at;
      let restart = false;
      try {
        for (let i = 0; i < parts.length - 1 && !restart; i++) {
          const name = parts[i]!;
          const child = this.descend(dirFd, dir, name, mount, apiPath, opts.create);
          if (child === "symlink") {
            follow(dir, name, dirFd, parts.slice(i + 1));
            restart = true;
          } else {
            closeQuietly(dirFd);
            dirFd = child;
            dir = joinApi(dir, name);
          }
        }
        if (!restart) {
          const name = parts[parts.length - 1]!;
          if (opts.followFinal && lstatOrNull(at(dirFd, name))?.isSymbolicLink()) {
            follow(dir, name, dirFd, []);
            restart = true;
          } else {
            const resolved: Resolved = { dirFd, name, path: joinApi(dir, name), mount, isRoot: false };
            dirFd = -1; // ownership passes to the caller
            return resolved;
          }
        }
      } catch (e) {
        throw fsError(e, apiPath);
      } finally {
        if (dirFd >= 0) closeQuietly(dirFd);
      }
    }
  }

  /** One step of the walk: the child directory's fd, or "symlink" when the step must be followed. */
  private descend(
    dirFd: number,
    dir: string,
    name: string,
    mount: Mount,
    apiPath: string,
    create: boolean,
  ): number | "symlink" {
    const here = joinApi(dir, name);
    for (let attempt = 0; ; attempt++) {
      const st = lstatOrNull(at(dirFd, name));
      if (!st) {
        if (!create)
          throw new ApiError("file_not_found", `No such file or directory: "${apiPath}" (${here} does not exist)`);
        try {
          this.mkdirAt(dirFd, name, mount, apiPath);
        } catch (e) {
          // Someone (the sandbox) created it meanwhile: look again.
          if (errno(e) !== "EEXIST" && errno(e) !== "ELOOP" && errno(e) !== "ENOTDIR") throw e;
          if (attempt >= RACE_RETRIES) throw e;
        }
        continue;
      }
      if (st.isSymbolicLink()) return "symlink";
      if (!st.isDirectory()) {
        if (create)
          throw new ApiError("not_a_directory", `Cannot create "${apiPath}": ${here} is a file, not a directory`);
        throw new ApiError("file_not_found", `No such file or directory: "${apiPath}" (${here} is not a directory)`);
      }
      try {
        return this.openDir(at(dirFd, name), mount, apiPath);
      } catch (e) {
        // Swapped for a symlink or a file between lstat and open: look again, a bounded number of times.
        if ((errno(e) !== "ELOOP" && errno(e) !== "ENOTDIR") || attempt >= RACE_RETRIES) throw e;
      }
    }
  }

  /** GET /files: a file's bytes (≤ 10 MiB) or a directory's entries. */
  read(apiPath: string): ReadResult {
    const r = this.resolve(apiPath, { create: false, followFinal: true });
    let fd: number | null = null;
    try {
      const pre = lstatOrNull(at(r.dirFd, r.name));
      if (!pre) throw new ApiError("file_not_found", `No such file or directory: "${apiPath}"`);
      if (pre.isDirectory()) {
        fd = r.isRoot
          ? this.openDir(r.mount.host, r.mount, apiPath)
          : this.openDir(at(r.dirFd, r.name), r.mount, apiPath);
        return { type: "directory", ...this.listFd(fd, apiPath) };
      }
      fd = this.openRegular(r, apiPath).fd;
      const st = fs.fstatSync(fd);
      if (st.size > MAX_JSON_FILE_BYTES) throw fileTooLarge(apiPath, st.size);
      const content = readUpTo(fd, MAX_JSON_FILE_BYTES + 1);
      if (content.length > MAX_JSON_FILE_BYTES) throw fileTooLarge(apiPath, content.length);
      return { type: "file", size: content.length, content, modified_at: iso(st.mtimeMs) };
    } catch (e) {
      throw fsError(e, apiPath);
    } finally {
      closeQuietly(fd);
      closeQuietly(r.dirFd);
    }
  }

  /** Opens an existing regular file for reading; FIFOs, sockets and devices are refused unopened. */
  private openRegular(r: Resolved, apiPath: string): { fd: number; st: fs.Stats } {
    const pre = lstatOrNull(at(r.dirFd, r.name));
    if (!pre) throw new ApiError("file_not_found", `No such file or directory: "${apiPath}"`);
    if (pre.isDirectory()) throw new ApiError("is_a_directory", `"${apiPath}" is a directory`);
    if (!pre.isFile()) throw new ApiError("invalid_path", `"${apiPath}" is not a regular file (${entryType(pre)})`);
    // O_NONBLOCK: had it been swapped for a FIFO, the open must not wait for a writer.
    const fd = fs.openSync(at(r.dirFd, r.name), C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile()) throw new ApiError("invalid_path", `"${apiPath}" is not a regular file`);
      this.assertInside(fd, r.mount, apiPath);
      return { fd, st };
    } catch (e) {
      closeQuietly(fd);
      throw e;
    }
  }

  /** GET /files/raw: an open fd to stream from (the caller closes it). */
  openForDownload(apiPath: string): OpenedFile {
    const r = this.resolve(apiPath, { create: false, followFinal: true });
    try {
      if (r.isRoot) throw new ApiError("is_a_directory", `"${apiPath}" is a directory`);
      const { fd, st } = this.openRegular(r, apiPath);
      return { fd, size: st.size, name: r.name, modified_at: iso(st.mtimeMs) };
    } catch (e) {
      throw fsError(e, apiPath);
    } finally {
      closeQuietly(r.dirFd);
    }
  }

  /** Directory entries sorted by name; symlinks are listed as they are, never followed. */
  /**
   * At most MAX_LIST_ENTRIES entries (then `truncated`): a directory of millions of files must not
   * stall the engine or build a response of hundreds of MB.
   */
  private listFd(fd: number, apiPath: string): { entries: DirEntry[]; truncated: boolean } {
    const entries: DirEntry[] = [];
    let truncated = false;
    const dir = fs.opendirSync(`/proc/self/fd/${fd}`, { encoding: "buffer" as BufferEncoding });
    try {
      for (let d = dir.readSync(); d; d = dir.readSync()) {
        if (entries.length >= MAX_LIST_ENTRIES) {
          truncated = true;
          break;
        }
        const raw = d.name as unknown as Buffer;
        this.pushEntry(entries, fd, raw, apiPath);
      }
    } finally {
      dir.closeSync();
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { entries, truncated };
  }

  private pushEntry(entries: DirEntry[], fd: number, raw: Buffer, apiPath: string): void {
    const st = lstatOrNull(atRaw(fd, raw));
    if (!st) return; // deleted while listing
    // A name that is not UTF-8 is shown with U+FFFD; it cannot be addressed through the JSON API.
    const name = raw.toString("utf8");
    const type = entryType(st);
    entries.push({
      name,
      path: joinApi(apiPath, name),
      is_dir: type === "directory",
      type,
      size: st.size,
      modified_at: iso(st.mtimeMs),
    });
  }

  /**
   * POST /files: writes `data` in place, creating parents. Never opened with O_TRUNC: the file is
   * truncated (ftruncate) only after the fd is known to be a regular file inside the sandbox.
   */
  write(apiPath: string, data: Buffer, mode?: number): { path: string; size: number } {
    const r = this.resolve(apiPath, { create: true, followFinal: true });
    let fd: number | null = null;
    try {
      if (r.isRoot) throw new ApiError("is_a_directory", `"${apiPath}" is a directory`);
      const target = at(r.dirFd, r.name);
      let created = false;
      try {
        fd = fs.openSync(target, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW | C.O_NONBLOCK, 0o600);
        created = true;
      } catch (e) {
        if (errno(e) !== "EEXIST") throw e;
        const pre = lstatOrNull(target);
        if (pre?.isDirectory()) throw new ApiError("is_a_directory", `Cannot write "${apiPath}": it is a directory`);
        if (pre && !pre.isFile())
          throw new ApiError("invalid_path", `Cannot write "${apiPath}": it is not a regular file (${entryType(pre)})`);
        fd = fs.openSync(target, C.O_WRONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
      }
      const st = fs.fstatSync(fd);
      if (!st.isFile()) throw new ApiError("invalid_path", `Cannot write "${apiPath}": it is not a regular file`);
      this.assertInside(fd, r.mount, apiPath);
      if (created) fs.fchownSync(fd, this.uid, this.uid);
      if (created || mode !== undefined) fs.fchmodSync(fd, mode ?? 0o644);
      fs.ftruncateSync(fd, 0);
      let off = 0;
      while (off < data.length) off += fs.writeSync(fd, data, off, data.length - off, off);
      return { path: apiPath, size: data.length };
    } catch (e) {
      throw fsError(e, apiPath);
    } finally {
      closeQuietly(fd);
      closeQuietly(r.dirFd);
    }
  }

  /**
   * PUT /files/raw: streams into a temp file next to the target, then renames it over the target,
   * so a failed or oversized upload leaves whatever existed untouched.
   */
  async upload(
    apiPath: string,
    source: Readable | undefined,
    maxBytes?: number,
  ): Promise<{ path: string; size: number }> {
    const r = this.resolve(apiPath, { create: true, followFinal: true });
    let fd: number | null = null;
    let tmpName: string | null = null;
    try {
      if (r.isRoot) throw new ApiError("is_a_directory", `"${apiPath}" is a directory`);
      const existing = lstatOrNull(at(r.dirFd, r.name));
      if (existing?.isDirectory()) throw new ApiError("is_a_directory", `Cannot write "${apiPath}": it is a directory`);
      if (existing && !existing.isFile())
        throw new ApiError(
          "invalid_path",
          `Cannot write "${apiPath}": it is not a regular file (${entryType(existing)})`,
        );
      tmpName = `.${r.name.slice(0, 200)}.upload-${randomBytes(6).toString("hex")}`;
      fd = fs.openSync(at(r.dirFd, tmpName), C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
      this.assertInside(fd, r.mount, apiPath);
      fs.fchownSync(fd, this.uid, this.uid);
      fs.fchmodSync(fd, existing ? existing.mode & 0o777 : 0o644);

      const size = source ? await copyCapped(source, fd, maxBytes) : 0;
      fs.closeSync(fd);
      fd = null;
      fs.renameSync(at(r.dirFd, tmpName), at(r.dirFd, r.name));
      tmpName = null;
      return { path: apiPath, size };
    } catch (e) {
      throw fsError(e, apiPath);
    } finally {
      closeQuietly(fd);
      if (tmpName) {
        try {
          fs.unlinkSync(at(r.dirFd, tmpName));
        } catch {
          /* never created or already gone */
        }
      }
      closeQuietly(r.dirFd);
    }
  }

  /**
   * DELETE /files: a file or symlink (never followed), or an empty directory. A non-empty directory
   * with `recursive` is left to the caller (`tree: true`), which removes it inside the sandbox as the sandbox user: a tree of
   * any size then costs the engine no blocking work and no root access.
   */
  remove(apiPath: string, recursive: boolean): { path: string; size: number; type: DirEntry["type"]; tree?: true } {
    if (this.isMountRoot(apiPath))
      throw new ApiError(
        "invalid_path",
        `"${apiPath}" is a sandbox mount root and cannot be deleted; delete what is inside it instead`,
      );
    const r = this.resolve(apiPath, { create: false, followFinal: false });
    try {
      if (r.isRoot)
        throw new ApiError("invalid_path", `"${apiPath}" leads to the mount root ${r.path}, which cannot be deleted`);
      const st = lstatOrNull(at(r.dirFd, r.name));
      if (!st) throw new ApiError("file_not_found", `No such file or directory: "${apiPath}"`);
      if (!st.isDirectory()) {
        fs.unlinkSync(at(r.dirFd, r.name));
        return { path: apiPath, size: st.size, type: entryType(st) };
      }
      try {
        fs.rmdirSync(at(r.dirFd, r.name));
      } catch (e) {
        if (errno(e) !== "ENOTEMPTY" && errno(e) !== "EEXIST") throw e;
        if (!recursive)
          throw new ApiError(
            "directory_not_empty",
            `Directory "${apiPath}" is not empty; pass recursive=true to delete it with its contents`,
          );
        return { path: apiPath, size: 0, type: "directory", tree: true };
      }
      return { path: apiPath, size: 0, type: "directory" };
    } catch (e) {
      throw fsError(e, apiPath);
    } finally {
      closeQuietly(r.dirFd);
    }
  }
}

function lstatOrNull(p: string | Buffer): fs.Stats | null {
  try {
    return fs.lstatSync(p);
  } catch (e) {
    if (errno(e) === "ENOENT" || errno(e) === "ENOTDIR") return null;
    throw e;
  }
}

/**
 * Copies the request body into `fd`, stopping at `maxBytes`. The body is read through an iterator
 * that does not destroy it on an early stop: destroying a request kills its socket, and the
 * client should get its 413. What is left of the body is drained and dropped.
 */
async function copyCapped(source: Readable, fd: number, maxBytes: number | undefined): Promise<number> {
  let size = 0;
  try {
    for await (const chunk of source.iterator({ destroyOnReturn: false })) {
      const buf = chunk as Buffer;
      size += buf.length;
      if (maxBytes !== undefined && size > maxBytes) {
        throw new ApiError(
          "payload_too_large",
          `Upload is larger than this URL's max_bytes (${maxBytes}); nothing was written`,
          { limit: maxBytes },
        );
      }
      let off = 0;
      while (off < buf.length) off += await writeAsync(fd, buf, off);
    }
  } catch (e) {
    if (!source.destroyed) source.resume();
    throw e;
  }
  return size;
}

function writeAsync(fd: number, buf: Buffer, off: number): Promise<number> {
  return new Promise((resolve, reject) =>
    fs.write(fd, buf, off, buf.length - off, null, (err, n) => (err ? reject(err) : resolve(n))),
  );
}

function readUpTo(fd: number, max: number): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  while (total < max) {
    const buf = Buffer.allocUnsafe(Math.min(1024 * 1024, max - total));
    const n = fs.readSync(fd, buf, 0, buf.length, total);
    if (n === 0) break;
    chunks.push(n === buf.length ? buf : buf.subarray(0, n));
    total += n;
  }
  return Buffer.concat(chunks, total);
}

function fileTooLarge(apiPath: string, size: number): ApiError {
  return new ApiError(
    "payload_too_large",
    `"${apiPath}" is ${size} bytes; the JSON file API returns files up to ${MAX_JSON_FILE_BYTES} bytes. Use POST files/presign-download or GET files/raw for larger files.`,
    { size, limit: MAX_JSON_FILE_BYTES },
  );
}

/**
 * The target of a symlink the walk just saw. The sandbox may have swapped it for a directory or a
 * file in between (readlink then fails with EINVAL): the path changed under the request, which is
 * the sandbox's doing, so a 400 like a symlink swapped in mid-open, never a 500.
 */
export function readLinkOf(p: string, apiPath: string): string {
  try {
    return fs.readlinkSync(p);
  } catch (e) {
    if (errno(e) === "EINVAL")
      throw new ApiError(
        "invalid_path",
        `"${apiPath}" was replaced while it was being resolved (a symlink became a file or directory); retry`,
      );
    throw e;
  }
}

/** Maps what the kernel said to the contract's codes; ApiErrors pass through unchanged. */
export function fsError(e: unknown, apiPath: string): unknown {
  if (e instanceof ApiError) return e;
  switch (errno(e)) {
    case "ENOENT":
      return new ApiError("file_not_found", `No such file or directory: "${apiPath}"`);
    case "ENOTDIR":
      return new ApiError("not_a_directory", `A component of "${apiPath}" is not a directory`);
    case "EISDIR":
      return new ApiError("is_a_directory", `"${apiPath}" is a directory`);
    case "ELOOP":
      return new ApiError("invalid_path", `"${apiPath}" was replaced by a symlink while it was being opened`);
    // A parent directory the walk creates was made (and swapped again) by the sandbox itself, on
    // every retry: the sandbox is racing the request, which is its input, never an engine fault.
    case "EEXIST":
      return new ApiError(
        "invalid_path",
        `"${apiPath}" kept changing while it was being created (something in the sandbox is replacing it); retry`,
      );
    case "ENAMETOOLONG":
      return new ApiError("invalid_path", `"${apiPath}" resolves to a path that is too long`);
    case "ENXIO":
      return new ApiError("invalid_path", `"${apiPath}" is not a regular file`);
    case "ENOSPC":
    case "EDQUOT":
      return new ApiError(
        "internal_error",
        "The engine's disk is full; free space (or delete files in the sandbox) and retry",
      );
    default:
      return e;
  }
}
