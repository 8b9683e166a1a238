import fs from "node:fs";

/**
 * What of a sandbox's /proc is made read-only or masked, as runc and Docker do it (their
 * ReadonlyPaths and MaskedPaths). bwrap's --proc mounts a fresh procfs for the sandbox's pid
 * namespace and covers /proc/irq and /proc/bus itself, but it leaves /proc/sys writable whenever
 * it cannot tell the directory is writable, and the kernel lets a process whose uid is the host's
 * root write most of /proc/sys without any capability: a template build (uid 0, no capabilities)
 * set kernel.core_pattern to a pipe into a file it had written, and the kernel ran that file as
 * the host's root. Every sandbox, terminal and build now gets these mounts, whoever it runs as.
 *
 * /proc/sys stays readable (programs read their limits there): it is the host procfs's /proc/sys,
 * bound read-only. The kernel answers each read for the reading process's own namespaces (net,
 * uts, ipc, user), so a sandbox sees its own values, as in its own procfs.
 */
const READ_ONLY = ["sys", "sysrq-trigger", "irq", "bus", "fs"];
/** Files that tell about the host (kernel memory, other users' keys, timers of every process): an empty file stands in. */
const MASKED_FILES = ["kcore", "keys", "latency_stats", "timer_list", "timer_stats", "sched_debug"];
/** Directories of host hardware: an empty read-only tmpfs stands in. */
const MASKED_DIRS = ["acpi", "scsi"];

export interface ProcMasks {
  /** Names under /proc bound read-only from the host's procfs. */
  readOnly: string[];
  masked: { name: string; kind: "file" | "dir" }[];
}

/**
 * The masks for this kernel: only what its procfs has (bwrap cannot mount onto a missing
 * name, and a procfs makes no new ones). Read from the engine's own /proc, the same kernel's.
 */
export function procMasks(proc = "/proc"): ProcMasks {
  const exists = (name: string) => fs.existsSync(`${proc}/${name}`);
  return {
    readOnly: READ_ONLY.filter(exists),
    masked: [
      ...MASKED_FILES.filter(exists).map((name) => ({ name, kind: "file" as const })),
      ...MASKED_DIRS.filter(exists).map((name) => ({ name, kind: "dir" as const })),
    ],
  };
}

/** bwrap arguments that apply the masks; they must come after `--proc /proc`. */
export function procMaskArgs(masks: ProcMasks): string[] {
  const args: string[] = [];
  for (const name of masks.readOnly) args.push("--ro-bind", `/proc/${name}`, `/proc/${name}`);
  for (const m of masks.masked) {
    if (m.kind === "file") args.push("--ro-bind", "/dev/null", `/proc/${m.name}`);
    else args.push("--tmpfs", `/proc/${m.name}`, "--remount-ro", `/proc/${m.name}`);
  }
  return args;
}
