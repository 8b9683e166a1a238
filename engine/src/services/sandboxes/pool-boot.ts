import fs from "node:fs";
import path from "node:path";
import type { EngineConfig } from "../../config.js";
import { SIZES } from "../../plans.js";
import { procStartTime } from "../../runtime/holder.js";
import type { Host } from "../../runtime/host.js";
import { startNetwork } from "../../runtime/network.js";
import { createSandboxDirs, removeSandboxDirs, SandboxProcess } from "../../runtime/sandbox-proc.js";
import type { SandboxCgroup } from "../../runtime/cgroups.js";
import type { PoolMember } from "../warm-pool.js";

/** The one shape the warm pool holds: size small, network "off". Any other create boots cold. */
export const POOL_SHAPE = { size: "small", ...SIZES.small } as const;

/** Pool members' bookkeeping files (key.json: uid and init pid), so a later engine can end them. */
function markerDir(config: EngineConfig): string {
  return path.join(config.root, "pool");
}

/** What booting and ending a pool member needs from the engine. */
export interface PoolRuntime {
  config: EngineConfig;
  host: Host;
  pidsMax: number;
  /** The scratch tmpfs size for a sandbox of this memory (SandboxService.scratchFor). */
  scratch: { bytes: number; inodes: number } | null;
}

/**
 * Boots a member exactly as a cold create boots a sandbox of POOL_SHAPE with network "off", minus
 * everything that belongs to an account: its spec.env stays empty (no process inside reads it
 * before the claim sets it: the init was started with a fixed environment, every command gets
 * spec.env as it enters), and it has no row, no meter, no timer.
 */
export async function bootPoolMember(
  rt: PoolRuntime,
  spec: { key: string; uid: number; templateId: string },
): Promise<PoolMember> {
  const image = rt.host.images.get(spec.templateId);
  if (!image?.available) throw new Error(`template ${spec.templateId} cannot run on this machine`);
  const dir = path.join(rt.config.root, "sbx", spec.key);
  const memoryBytes = POOL_SHAPE.memory_mb * 1024 * 1024;
  let cgroup: SandboxCgroup | undefined;
  try {
    await createSandboxDirs(dir, spec.uid, rt.scratch);
    cgroup = await rt.host.cgroups.create(spec.key, { memoryBytes, cpu: POOL_SHAPE.cpu, pidsMax: rt.pidsMax });
    const proc = await SandboxProcess.start(
      rt.host,
      {
        id: spec.key,
        uid: spec.uid,
        dir,
        image,
        env: {},
        network: "off",
        limits: { memoryBytes, pidsMax: rt.pidsMax },
      },
      cgroup,
    );
    const network = await startNetwork(rt.host, proc, "off", [], rt.config);
    return { key: spec.key, uid: spec.uid, templateId: spec.templateId, proc, network };
  } catch (e) {
    await cgroup?.destroy().catch(() => undefined);
    await removeSandboxDirs(dir, rt.host.scratchTmpfs);
    throw e;
  }
}

export async function destroyPoolMember(rt: PoolRuntime, m: PoolMember): Promise<void> {
  await m.proc.kill();
  await m.network.close().catch(() => undefined);
  await removeSandboxDirs(m.proc.spec.dir, rt.host.scratchTmpfs);
}

/** Written before a member boots (pid null) and again once its init runs; removed at claim or end. */
export function rememberPoolMember(config: EngineConfig, key: string, uid: number, pid: number | null): void {
  fs.mkdirSync(markerDir(config), { recursive: true, mode: 0o700 });
  // The init's start time too: with it, a pid reused by another process is never taken for the member.
  const start = pid ? procStartTime(pid) : null;
  fs.writeFileSync(path.join(markerDir(config), `${key}.json`), JSON.stringify({ uid, pid, start }), {
    mode: 0o600,
  });
}

export function forgetPoolMember(config: EngineConfig, key: string): void {
  fs.rmSync(path.join(markerDir(config), `${key}.json`), { force: true });
}

const KEY = /^sbx_pool[0-9a-f]{24}$/;

/**
 * At engine start, before the pool refills: members of an earlier run are never re-adopted (no
 * account ever saw them). Each one's init is killed if it still runs (matched by pid, start time
 * and owning uid, so a reused pid is left alone even where the uid was handed out again; killing a
 * pid namespace's init ends everything in it) and its directory removed. Returns how many were found.
 */
export async function sweepPoolLeftovers(config: EngineConfig, scratchTmpfs: boolean): Promise<number> {
  let names: string[];
  try {
    names = fs.readdirSync(markerDir(config));
  } catch {
    return 0;
  }
  let found = 0;
  for (const name of names) {
    const key = name.replace(/\.json$/, "");
    if (!KEY.test(key)) continue;
    found++;
    try {
      const { uid, pid, start } = JSON.parse(fs.readFileSync(path.join(markerDir(config), name), "utf8")) as {
        uid: number;
        pid: number | null;
        start?: string | null;
      };
      // A marker from before start times were kept (start undefined) has the uid check alone.
      const sameProcess = start === undefined || (start !== null && procStartTime(pid ?? 0) === start);
      if (pid && sameProcess && processUid(pid) === uid) process.kill(pid, "SIGKILL");
    } catch {
      // An unreadable marker (a crash while writing it): its directory is removed all the same.
    }
    await removeSandboxDirs(path.join(config.root, "sbx", key), scratchTmpfs);
    forgetPoolMember(config, key);
  }
  return found;
}

/** The real uid of a process, or null when it is gone. */
function processUid(pid: number): number | null {
  try {
    const m = /^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}
