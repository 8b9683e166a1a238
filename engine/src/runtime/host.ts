import { execFile, execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import type { EngineConfig } from "../config.js";
import { cgroupInstance, detectCgroups, noCgroups, withOpaqueNames, type CgroupDriver } from "./cgroups.js";
import { OpaqueNames } from "./opaque-names.js";
import { disableFastMigration, enableFastMigration } from "./cgroups/fast-migration.js";
import { canTraverse, makeEngineDirsSearchable, sameDirectory, sandboxRootProblem } from "./sandbox-root.js";
import { prepareSeccomp, type SeccompFilter } from "./seccomp.js";
import { ensureHoldersDir, listRecords, prepareHolder } from "./holder.js";
import { prepareOverlayHelper, probeIdmappedOverlay } from "./overlay.js";
import { procMasks, type ProcMasks } from "./proc-masks.js";
import { detectBaseImages, type BaseImage } from "./templates.js";
import { which } from "../lib/which.js";

const execFileP = promisify(execFile);

/** The address range sandboxes would use for veths: blackholed so nothing aimed at a sandbox leaves by the default route. */
export const SANDBOX_CIDR = "10.200.0.0/16";

/**
 * What the machine allows, measured at start by really trying each mechanism. It becomes the
 * `isolation` block of `GET /v1/sandboxes/limits` and the start-up report, so every degradation is said.
 */
export interface Isolation {
  mode: "bwrap-userns" | "bwrap-root" | "unavailable";
  running_as_root: boolean;
  namespaces: {
    user: boolean;
    pid: boolean;
    mount: boolean;
    ipc: boolean;
    uts: boolean;
    net: boolean;
    cgroup: boolean;
  };
  per_sandbox_uid: boolean;
  rootfs: {
    host_userland_read_only: boolean;
    private_workspace: boolean;
    private_tmp: boolean;
    scratch: "tmpfs" | "host-disk";
  };
  cgroups: {
    version: "v1" | "v2" | "none";
    memory: boolean;
    cpu: boolean;
    pids: boolean;
    freezer: boolean;
    cpuacct: boolean;
  };
  network: {
    off: boolean;
    restricted: boolean;
    open: string | false;
    open_filter: "nftables" | false;
    blackhole: boolean;
  };
  pause: "freezer" | "unavailable";
  /**
   * The syscall filter on every sandbox process (runtime/seccomp-policy.ts): `enforced` false says
   * why in `reason` (and in `degraded`).
   */
  seccomp: {
    enforced: boolean;
    policy: string | null;
    blocked_abis: string[];
    filter_instructions: number | null;
    reason: string | null;
  };
  /**
   * What of /proc is read-only or masked in every sandbox, terminal and build (runtime/proc-masks.ts),
   * as Docker and runc do it: nothing inside writes the host kernel's state through it.
   */
  proc: { read_only: string[]; masked: string[] };
  /** /sys is never mounted in a sandbox: nothing there to read or write. */
  sys: "not mounted";
  /**
   * Who a template build's steps run as. "userns-root": uid 0 in the build's own user namespace,
   * an unprivileged host uid outside, writing the layer through idmapped overlay layers;
   * "unprivileged": that host uid itself (no user namespaces here); null: builds unavailable.
   */
  builds: { user: "userns-root" | "unprivileged"; host_uids: string; idmapped_layers: true } | null;
  snapshots_include_memory: false;
  kernel: string;
  enforced: string[];
  degraded: string[];
}

export interface Host {
  isolation: Isolation;
  /** First uid of this engine's block of per-sandbox host uids. */
  uidBase: number;
  /** Whether sandbox scratch (/workspace, /tmp) is a size-capped tmpfs (needs root in a private mount namespace). */
  scratchTmpfs: boolean;
  cgroups: CgroupDriver;
  images: Map<string, BaseImage>;
  /** Host path the sandbox's bwrap binds for a runtime (inside the engine's private mount ns). */
  runtimeSource(bind: { src: string }): string;
  slirp4netns: string | null;
  bwrap: string | null;
  /** The compiled seccomp filter every sandbox process runs under; null where it is degraded. */
  seccomp: SeccompFilter | null;
  /**
   * The sandbox holder (runtime/holder.ts) and the engine root whose holders/ directory keeps its
   * sockets and adoption records; null: sandboxes die with the engine (said in `degraded`).
   */
  holder: { bin: string; root: string } | null;
  /**
   * The overlay mounter (runtime/overlay.ts) for templates, and whether this kernel took an
   * idmapped writable overlay at start; `templates` says why custom templates are unavailable, or null.
   */
  overlay: { bin: string; idmap: boolean } | null;
  templates: string | null;
  /** The /proc paths made read-only or masked in every sandbox (runtime/proc-masks.ts). */
  procMasks: ProcMasks;
  /** `keepSandboxes`: sandboxes keep running (an upgrade stop), so the shared blackhole route stays. */
  close(opts?: { keepSandboxes?: boolean }): Promise<void>;
}

/** Each engine hands out uids from its own block, so sandboxes of two engines never share a uid. */
export const UID_BLOCK = 10_000;
/**
 * The last uids of the block belong to template builds, one per build slot (services/templates.ts
 * runs up to this many at once): a build never shares a host uid with a sandbox or another build.
 */
export const BUILD_UIDS = 8;
/** How many uids of the block sandboxes may have (services/sandboxes/uid-pool.ts). */
export const SANDBOX_UIDS = UID_BLOCK - BUILD_UIDS;

/** The host uid build slot `slot` runs as: root inside the build's user namespace, nobody special outside. */
export function buildUid(uidBase: number, slot: number): number {
  if (slot < 0 || slot >= BUILD_UIDS) throw new Error(`build slot ${slot} out of range`);
  return uidBase + UID_BLOCK - 1 - slot;
}

/**
 * The first block at or after `base` that no running process uses: another engine on this
 * machine (another data dir, another port) keeps its sandboxes' uids apart from ours.
 */
function claimUidBlock(base: number, own: Set<number>, log: (m: string) => void): number {
  const used = new Set<number>();
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const uid = Number(fs.readFileSync(`/proc/${pid}/status`, "utf8").match(/^Uid:\s+(\d+)/m)?.[1]);
      // Our own sandboxes, still running from before a restart, keep their block ours.
      if (uid >= base && !own.has(uid)) used.add(Math.floor((uid - base) / UID_BLOCK));
    } catch {
      /* exited meanwhile */
    }
  }
  let block = 0;
  while (used.has(block)) block++;
  if (block > 0)
    log(
      `uids ${base}..${base + block * UID_BLOCK - 1} are in use by another engine; using ${base + block * UID_BLOCK}+`,
    );
  return base + block * UID_BLOCK;
}

/**
 * The overlay mounter for templates, and proof that this kernel takes what builds need. A build
 * whose root would be the host's uid 0 is never the fallback: without the helper or idmapped
 * overlays, custom templates are unavailable and the report says why.
 */
async function prepareTemplateMounts(
  config: EngineConfig,
  opts: { sandboxing: boolean; scratchTmpfs: boolean; uidBase: number },
): Promise<{ overlay: Host["overlay"]; unavailable: string | null }> {
  if (!opts.sandboxing) return { overlay: null, unavailable: "sandboxing is unavailable" };
  // Overlay mounts must vanish with the engine: only in its private mount namespace as root.
  if (!opts.scratchTmpfs)
    return {
      overlay: null,
      unavailable:
        "custom templates need the engine running as root in its own mount namespace (npm run engine as root)",
    };
  const helper = prepareOverlayHelper({ disabled: false, stateDir: config.root });
  if (helper.path === null) return { overlay: null, unavailable: helper.reason };
  const why = await probeIdmappedOverlay(helper.path, config.root, buildUid(opts.uidBase, 0));
  if (why)
    return {
      overlay: { bin: helper.path, idmap: false },
      unavailable: `this kernel refused an idmapped overlay (${why}), and a build's root must not be the host's uid 0`,
    };
  return { overlay: { bin: helper.path, idmap: true }, unavailable: null };
}

function inPrivateMountNs(): boolean {
  return process.env.BATON_ENGINE_IN_MNTNS === "1";
}

export async function prepareHost(config: EngineConfig, log: (msg: string) => void): Promise<Host> {
  const degraded: string[] = [];
  const enforced: string[] = [];
  const isRoot = process.getuid?.() === 0;
  const bwrap = which("bwrap");
  const slirp = config.disable.has("slirp4netns") ? null : which("slirp4netns");
  const nftables = isRoot && which("nft") !== null;
  const kernel = fs.existsSync("/proc/sys/kernel/osrelease")
    ? fs.readFileSync("/proc/sys/kernel/osrelease", "utf8").trim()
    : "unknown";

  fs.mkdirSync(path.join(config.root, "sbx"), { recursive: true, mode: 0o711 });
  makeEngineDirsSearchable(config.dataDir, config.root);
  fs.chmodSync(path.join(config.root, "sbx"), 0o711);
  // Sandbox uids must reach their directories (server.ts moves the root where they can; an engine
  // built another way may still sit below a 0700 directory): without that nothing can start, and
  // creates answer 501 with this sentence rather than 500 with bwrap's.
  const unreachable = isRoot ? sandboxRootProblem(path.join(config.root, "sbx"), config.uidBase - 1) : null;

  // User namespaces, tried for real as an unprivileged uid: the preferred mode, where no sandbox
  // process holds any host capability.
  let mode: Isolation["mode"] = "unavailable";
  if (bwrap && isRoot && !unreachable) {
    const probe = config.disable.has("userns")
      ? { status: 1, stderr: "disabled by ORKESTR_ENGINE_DISABLE" }
      : spawnSync(
          bwrap,
          [
            "--unshare-user",
            "--unshare-pid",
            "--unshare-net",
            "--disable-userns",
            "--ro-bind",
            "/",
            "/",
            "--proc",
            "/proc",
            "true",
          ],
          {
            uid: config.uidBase - 1,
            gid: config.uidBase - 1,
            timeout: 5000,
          },
        );
    if (probe.status === 0) mode = "bwrap-userns";
    else {
      const asRoot = spawnSync(
        bwrap,
        ["--unshare-pid", "--unshare-net", "--ro-bind", "/", "/", "--proc", "/proc", "true"],
        { timeout: 5000 },
      );
      if (asRoot.status === 0) {
        mode = "bwrap-root";
        degraded.push(
          `user namespaces refused (${String(probe.stderr).trim() || "exit " + probe.status}): bwrap runs without a user namespace, in its setuid mode (real uid the sandbox's, effective root), and drops to the sandbox uid itself before the sandbox's first instruction`,
        );
      }
    }
  }
  if (unreachable) degraded.push(unreachable);
  else if (mode === "unavailable") {
    degraded.push(
      !bwrap
        ? "bubblewrap (bwrap) is not installed: sandboxes cannot be created (apt-get install bubblewrap)"
        : !isRoot
          ? "the engine is not running as root: it cannot give each sandbox its own host uid or cgroups, so sandboxes cannot be created"
          : "bwrap failed to create namespaces on this kernel",
    );
  }

  // Named after the data dir, not this process: sandboxes outlive the engine (runtime/holder.ts),
  // so the next engine of this data dir adopts the groups, and no other engine reaps them.
  const cgroups = config.disable.has("cgroups")
    ? noCgroups("disabled by ORKESTR_ENGINE_DISABLE")
    : withOpaqueNames(detectCgroups(cgroupInstance(config.dataDir)), OpaqueNames.forRoot(config.root));
  const cg = cgroups.support;
  if (cg.version === "none")
    degraded.push(`cgroups unavailable (${cg.reason}): no memory/CPU/pids limits, pause unavailable, metrics read 0`);
  else {
    for (const c of ["memory", "cpu", "pids", "freezer", "cpuacct"] as const)
      if (!cg[c]) degraded.push(`cgroup controller "${c}" is not writable`);
    const fast = enableFastMigration({ stateDir: config.root, privateMountNs: inPrivateMountNs(), isRoot });
    log(
      fast.enabled
        ? `cgroups: task migrations favour dynamic changes (favordynmods${fast.already ? ", mounted by an earlier engine" : ""}): an exec after idle does not wait for an RCU grace period`
        : `cgroups: the first exec after idle may wait 10–20 ms for an RCU grace period (favordynmods: ${fast.reason})`,
    );
  }

  // Runtimes that live under /root (pyenv) are bound once into this private mount namespace,
  // so unprivileged bwrap can reach them without /root being visible.
  const images = detectBaseImages();
  const rtDir = path.join(config.root, "rt");
  const binds = new Map<string, string>();
  fs.mkdirSync(rtDir, { recursive: true, mode: 0o755 });
  for (const image of images.values()) {
    for (const b of image.binds) {
      if (binds.has(b.src)) continue;
      const target = path.join(rtDir, b.src.replace(/[^A-Za-z0-9.-]+/g, "_"));
      if (!isRoot || !inPrivateMountNs()) {
        // Outside a private mount namespace we must not leave host mounts behind: fall back to the path itself.
        binds.set(b.src, b.src);
        continue;
      }
      fs.mkdirSync(target, { recursive: true });
      // A restarted engine shares the mount namespace its sandboxes' holders keep (server.ts):
      // the bind is there already.
      if (sameDirectory(b.src, target)) {
        binds.set(b.src, target);
        continue;
      }
      try {
        execFileSync("mount", ["--bind", "-o", "ro", b.src, target]);
        execFileSync("mount", ["-o", "remount,bind,ro", target]);
        binds.set(b.src, target);
      } catch (e) {
        degraded.push(`could not bind runtime ${b.src}: ${(e as Error).message}`);
        binds.set(b.src, b.src);
      }
    }
  }

  // A runtime that could not be bound (or lives below a 0700 directory outside a private mount
  // namespace) is out of reach for bwrap running as the sandbox's uid: its images are unavailable,
  // said plainly, rather than failing every create with bwrap's "Permission denied".
  if (isRoot && mode !== "unavailable") {
    const reachable = new Map<string, boolean>();
    for (const image of images.values()) {
      for (const b of image.binds) {
        const src = binds.get(b.src) ?? b.src;
        if (!reachable.has(src)) {
          reachable.set(src, canTraverse(src, config.uidBase - 1));
          if (!reachable.get(src))
            degraded.push(
              `runtime ${b.src} is not reachable by sandbox uids at ${src}: images that need it are unavailable`,
            );
        }
        if (!reachable.get(src) && image.available) {
          image.available = false;
          image.maps_to = `${image.maps_to} (unavailable: sandbox uids cannot reach ${b.src}; run the engine as root with util-linux unshare, or install the runtime outside a 0700 directory)`;
        }
      }
    }
  }

  let blackhole = false;
  let addedBlackhole = false;
  if (isRoot && which("ip")) {
    for (const cidr of [SANDBOX_CIDR, ...config.blackhole]) {
      try {
        const existing = (await execFileP("ip", ["route", "show", "type", "blackhole", cidr])).stdout.trim();
        if (!existing) {
          await execFileP("ip", ["route", "add", "blackhole", cidr]);
          if (cidr === SANDBOX_CIDR) addedBlackhole = true;
        }
        if (cidr === SANDBOX_CIDR) blackhole = true;
      } catch (e) {
        degraded.push(`could not blackhole ${cidr}: ${(e as Error).message.split("\n")[0]}`);
      }
    }
  } else degraded.push(`${SANDBOX_CIDR} not blackholed (needs root and iproute2)`);

  const sandboxing = mode !== "unavailable";
  const uidBase = claimUidBlock(
    config.uidBase,
    new Set(listRecords(config.root).map((r) => (r.spec as { uid: number }).uid)),
    log,
  );
  const sc = sandboxing
    ? prepareSeccomp({ disabled: config.disable.has("seccomp"), stateDir: config.root })
    : { filter: null, reason: "sandboxing is unavailable" };
  if (sc.filter && sc.built)
    log(
      `seccomp: built the libseccomp helper and a ${sc.filter.instructions}-instruction filter in ${Math.round(sc.ms)} ms`,
    );
  const hs = sandboxing
    ? prepareHolder({ disabled: config.disable.has("holder"), stateDir: config.root })
    : { path: null, reason: "sandboxing is unavailable" };
  if (hs.path === null && sandboxing)
    degraded.push(
      `sandboxes die with the engine process (${hs.reason}): a restart or crash fails every running sandbox`,
    );
  const scratchTmpfs = isRoot && inPrivateMountNs();
  const templates = await prepareTemplateMounts(config, { sandboxing, scratchTmpfs, uidBase });
  if (templates.unavailable && sandboxing) degraded.push(`custom templates unavailable: ${templates.unavailable}`);
  const proc = procMasks();
  if (sandboxing && !scratchTmpfs)
    degraded.push(
      "/workspace and /tmp are plain directories on the host disk with no size cap (the engine is not in a private mount namespace)",
    );
  const isolation: Isolation = {
    mode,
    running_as_root: isRoot,
    namespaces: {
      user: mode === "bwrap-userns",
      pid: sandboxing,
      mount: sandboxing,
      ipc: sandboxing,
      uts: sandboxing,
      net: sandboxing,
      cgroup: sandboxing,
    },
    per_sandbox_uid: sandboxing,
    rootfs: {
      host_userland_read_only: sandboxing,
      private_workspace: sandboxing,
      private_tmp: sandboxing,
      scratch: scratchTmpfs ? "tmpfs" : "host-disk",
    },
    cgroups: {
      version: cg.version,
      memory: cg.memory,
      cpu: cg.cpu,
      pids: cg.pids,
      freezer: cg.freezer,
      cpuacct: cg.cpuacct,
    },
    network: {
      off: sandboxing,
      restricted: sandboxing,
      open: sandboxing && slirp ? "slirp4netns" : false,
      open_filter: nftables ? "nftables" : false,
      blackhole,
    },
    pause: cg.freezer ? "freezer" : "unavailable",
    seccomp: sc.filter
      ? {
          enforced: true,
          policy: "allowlist modelled on Docker's default profile",
          blocked_abis: ["i386", "x32"],
          filter_instructions: sc.filter.instructions,
          reason: null,
        }
      : { enforced: false, policy: null, blocked_abis: [], filter_instructions: null, reason: sc.reason },
    proc: { read_only: proc.readOnly.map((p) => `/proc/${p}`), masked: proc.masked.map((m) => `/proc/${m.name}`) },
    sys: "not mounted",
    builds: templates.unavailable
      ? null
      : {
          user: mode === "bwrap-userns" ? "userns-root" : "unprivileged",
          host_uids: `${buildUid(uidBase, BUILD_UIDS - 1)}-${buildUid(uidBase, 0)}`,
          idmapped_layers: true,
        },
    snapshots_include_memory: false,
    kernel,
    enforced,
    degraded,
  };
  if (sandboxing) {
    enforced.push(
      `namespaces: pid, mount, ipc, uts, net, cgroup${mode === "bwrap-userns" ? ", user" : ""} (bubblewrap)`,
      "each sandbox runs as its own unprivileged host uid, with no capabilities and no_new_privs",
      "host userland read-only; private /workspace and /tmp; no view of /root, the engine's data or other sandboxes",
      `kernel state read-only in every sandbox, terminal and build: ${isolation.proc.read_only.join(", ")} read-only; ${isolation.proc.masked.join(", ")} masked; /sys not mounted`,
    );
  }
  if (isolation.builds)
    enforced.push(
      isolation.builds.user === "userns-root"
        ? `template builds run as root only inside their own user namespace: host uids ${isolation.builds.host_uids}, never the host's root; their layers are idmapped overlays named by descriptor, so no host path shows in their /proc/mounts`
        : `template builds run as an unprivileged host uid (${isolation.builds.host_uids}), never the host's root; their layers are idmapped overlays named by descriptor, so no host path shows in their /proc/mounts`,
    );
  if (scratchTmpfs)
    enforced.push("/workspace and /tmp are RAM-backed scratch (tmpfs) capped at the sandbox's memory size");
  if (cg.memory) enforced.push(`memory limit per size (cgroup ${cg.version})`);
  if (cg.cpu) enforced.push(`CPU quota per size (cgroup ${cg.version})`);
  if (cg.pids) enforced.push("process count capped (pids cgroup)");
  if (cg.freezer) enforced.push("pause freezes every process (freezer cgroup)");
  if (sandboxing)
    enforced.push(
      "network off = loopback only; restricted = HTTPS CONNECT through an allow-listing proxy, nothing else",
    );
  if (isolation.network.open) {
    enforced.push("network open = user-mode NAT (slirp4netns) without access to the host's loopback");
    if (nftables)
      enforced.push(
        "network open cannot reach the host's own addresses or private, link-local and reserved ranges (nftables)",
      );
    else
      degraded.push(
        "nftables (nft) is not installed: network open sandboxes can reach the host's non-loopback addresses and private networks",
      );
  } else if (sandboxing) degraded.push("network open unavailable: slirp4netns is not installed");
  if (blackhole) enforced.push(`${SANDBOX_CIDR} blackholed on the host`);
  if (sc.filter) {
    enforced.push(
      "seccomp on every sandbox process (init, exec, PTY sessions, relays): an allowlist modelled on Docker's default profile; io_uring, bpf, perf_event_open, userfaultfd, keyrings, mounts, new namespaces, kexec, kernel modules and file handles answer EPERM; i386 and x32 system calls kill the process",
    );
  } else if (sandboxing) {
    degraded.push(
      `seccomp unavailable (${sc.reason}): sandboxes can call io_uring, bpf, keyctl, perf_event_open, userfaultfd and the mount family on the shared kernel`,
    );
  }
  degraded.push("shared kernel: sandboxes are namespaces and cgroups, not VMs; a kernel exploit crosses them");
  degraded.push(
    "pause keeps memory in RAM (freezer), it is not written to a snapshot; snapshots and forks copy the filesystem only (no CRIU on this kernel)",
  );

  log(
    `isolation: ${mode}; cgroups ${cg.version}; seccomp ${isolation.seccomp.enforced ? `enforced (${isolation.seccomp.filter_instructions} BPF instructions)` : "not enforced"}; network open: ${isolation.network.open || "unavailable"}`,
  );
  for (const d of degraded) log(`  degraded: ${d}`);

  return {
    isolation,
    uidBase,
    scratchTmpfs,
    cgroups,
    images,
    bwrap,
    slirp4netns: slirp,
    seccomp: sc.filter,
    holder: hs.path ? { bin: hs.path, root: (ensureHoldersDir(config.root), config.root) } : null,
    overlay: templates.overlay,
    templates: templates.unavailable,
    procMasks: proc,
    runtimeSource: (b) => binds.get(b.src) ?? b.src,
    async close(opts = {}) {
      await cgroups.cleanup();
      if (!opts.keepSandboxes) disableFastMigration(config.root);
      for (const target of new Set(binds.values())) {
        if (target.startsWith(rtDir)) {
          try {
            execFileSync("umount", [target]);
            fs.rmdirSync(target);
          } catch {
            /* the private mount namespace dies with us anyway */
          }
        }
      }
      // The route is shared by every engine on this machine: the last one out removes it.
      if (addedBlackhole && !opts.keepSandboxes && !cgroups.otherEnginesAlive())
        await execFileP("ip", ["route", "del", "blackhole", SANDBOX_CIDR]).catch(() => undefined);
    },
  };
}
