import { execFile } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { buildHelper, type HelperBuild } from "./c-helper.js";

const execFileP = promisify(execFile);

/**
 * Template overlays through overlay/baton-overlay.c: every layer is named to overlayfs by a
 * descriptor (/proc/self/fd/N), so nothing inside a sandbox or build reads a host path in
 * /proc/mounts, and a build's layers are idmapped so that its root is an unprivileged host uid
 * (see the C source for why and how).
 */
const SOURCE = fileURLToPath(new URL("./overlay/baton-overlay.c", import.meta.url));

export function prepareOverlayHelper(opts: { disabled: boolean; stateDir: string }): HelperBuild {
  return buildHelper({ name: "baton-overlay", what: "the overlay mounter", source: SOURCE, ...opts });
}

export interface OverlaySpec {
  target: string;
  /** Lower layers, uppermost first. A read-only overlay needs two or more. */
  lowers: string[];
  /** A writable overlay: `dir` holds the upper and work directories (`upper`, `work` relative to it). */
  upper?: { dir: string; upper: string; work: string };
  /** Idmap every layer: the host's ids 0..65535 appear as idmap..idmap+65535. */
  idmap?: number;
}

export async function mountOverlay(bin: string, spec: OverlaySpec): Promise<void> {
  const args: string[] = [];
  if (spec.idmap !== undefined) args.push("--idmap", String(spec.idmap));
  if (spec.upper) args.push("--upper", spec.upper.dir, spec.upper.upper, spec.upper.work);
  args.push(spec.target, ...spec.lowers);
  await execFileP(bin, args, { timeout: 30_000 });
  // overlayfs falls back to a read-only mount when it cannot write its work directory, and says
  // so only in the kernel log: a writable overlay that came out read-only is a failed mount.
  if (spec.upper && !superblockWritable(spec.target)) {
    await execFileP("umount", [spec.target]).catch(() => undefined);
    throw new Error(`overlayfs mounted ${spec.target} read-only (it could not write its work directory)`);
  }
}

/** Whether the filesystem mounted at `target` is writable (its superblock options start "rw"). */
function superblockWritable(target: string): boolean {
  const line = fs
    .readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .filter((l) => l.split(" ")[4] === target)
    .pop();
  const superOptions = line?.split(" - ")[1]?.split(" ")[2] ?? "";
  return superOptions.split(",").includes("rw");
}

/**
 * Proves at start that this kernel takes an idmapped, writable overlay (idmapped layers need
 * Linux 5.19; detached ones as overlay layers, 6.15): mounts one over a scratch directory with
 * `uid` as the idmap and checks that a root-owned lower file appears owned by `uid`. Returns why
 * not, or null. Needs root in a private mount namespace; leaves nothing behind.
 */
export async function probeIdmappedOverlay(bin: string, scratch: string, uid: number): Promise<string | null> {
  const dir = await fsp.mkdtemp(path.join(scratch, ".overlay-probe-"));
  const target = path.join(dir, "mnt");
  let mounted = false;
  try {
    for (const d of ["lower", "layer/upper", "layer/work", "mnt"])
      await fsp.mkdir(path.join(dir, d), { recursive: true });
    await fsp.writeFile(path.join(dir, "lower", "f"), "");
    await mountOverlay(bin, {
      target,
      lowers: [path.join(dir, "lower")],
      upper: { dir: path.join(dir, "layer"), upper: "upper", work: "work" },
      idmap: uid,
    });
    mounted = true;
    const st = await fsp.stat(path.join(target, "f"));
    return st.uid === uid ? null : `a root-owned file appeared owned by uid ${st.uid}, not ${uid}`;
  } catch (e) {
    return ((e as { stderr?: string }).stderr || (e as Error).message).trim().split("\n")[0] ?? "failed";
  } finally {
    if (mounted)
      await execFileP("umount", [target]).catch(() => execFileP("umount", ["-l", target]).catch(() => undefined));
    await fsp.rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
