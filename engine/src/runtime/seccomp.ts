import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { policyText } from "./seccomp-policy.js";
import { which } from "../lib/which.js";

/**
 * The seccomp filter of every sandbox process (policy: seccomp-policy.ts).
 *
 * Built with libseccomp, not by hand: seccomp/baton-seccomp.c is compiled once with gcc against
 * Debian's libseccomp-dev (statically, see below), and its `export` mode turns the policy into the
 * classic-BPF program. Why a small C helper rather than python3-seccomp or an npm binding: the
 * filter has to be *loaded* by a process that nsenter put into the sandbox (exec, PTY sessions are
 * not descendants of the sandbox's init, so they do not inherit bwrap's filter), on every exec, in
 * well under a millisecond; a Python loader costs ~30 ms per exec, and the one npm binding
 * (node-seccomp 0.0.2, 2022) is unmaintained. One helper both generates and loads, so the program
 * bwrap installs and the one exec installs are the same bytes.
 *
 * The result is cached by content (source, policy, libseccomp headers) under /var/cache/baton-engine
 * (root only), so engines started in parallel share one build; an engine that cannot write there
 * uses its own state dir. Compiling costs ~0.4 s once; a cached start costs a hash and a self-test.
 */
export interface SeccompFilter {
  /** The compiled program (root-only 0600): bwrap --seccomp reads it from a descriptor. */
  bpfPath: string;
  /**
   * The static helper, root-owned 0711: executable but not readable by sandbox uids, so a process
   * running it is not dumpable (no ptrace attach by the sandbox) until it has loaded the filter
   * and exec'd the next program.
   */
  loaderPath: string;
  instructions: number;
  sha256: string;
}

export type SeccompSetup = { filter: SeccompFilter; built: boolean; ms: number } | { filter: null; reason: string };

const SOURCE = fileURLToPath(new URL("./seccomp/baton-seccomp.c", import.meta.url));
export const CACHE_DIRS = ["/var/cache/baton-engine"];

/** A root-owned directory nobody else can write to (created 0700 if missing). */
export function privateDir(dir: string): boolean {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = fs.lstatSync(dir);
    if (!st.isDirectory() || st.uid !== process.getuid?.() || (st.mode & 0o022) !== 0) return false;
    fs.accessSync(dir, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Builds (or finds in the cache) the helper and the compiled filter, then proves the kernel takes
 * it by running `true` under it. Never throws: a reason comes back instead, for the isolation report.
 */
export function prepareSeccomp(opts: { disabled: boolean; stateDir: string }): SeccompSetup {
  const t0 = performance.now();
  if (opts.disabled) return { filter: null, reason: "disabled by ORKESTR_ENGINE_DISABLE" };
  if (process.arch !== "x64")
    return { filter: null, reason: `the policy is written for x86_64, this is ${process.arch}` };
  const cc = which("cc") ?? which("gcc");
  if (!cc)
    return {
      filter: null,
      reason: "no C compiler to build the libseccomp helper (apt-get install gcc libseccomp-dev)",
    };
  const header = "/usr/include/seccomp.h";
  if (!fs.existsSync(header))
    return { filter: null, reason: "libseccomp-dev is not installed (apt-get install libseccomp-dev)" };
  let source: string;
  try {
    source = fs.readFileSync(SOURCE, "utf8");
  } catch (e) {
    return { filter: null, reason: `cannot read ${SOURCE}: ${(e as Error).message}` };
  }
  const policy = policyText();
  const key = createHash("sha256")
    .update(source)
    .update("\0")
    .update(policy)
    .update("\0")
    .update(fs.readFileSync(header))
    .digest("hex")
    .slice(0, 16);
  const base = [...CACHE_DIRS, path.join(opts.stateDir, "cache")].find(privateDir);
  if (!base)
    return {
      filter: null,
      reason: `no private directory to build the filter in (tried ${[...CACHE_DIRS, path.join(opts.stateDir, "cache")].join(", ")})`,
    };
  const dir = path.join(base, `seccomp-${key}`);
  let built = false;
  if (!fs.existsSync(path.join(dir, "filter.bpf"))) {
    const r = build(cc, dir, policy);
    if (typeof r === "string") return { filter: null, reason: r };
    built = true;
  }
  const filter = describe(dir);
  if (typeof filter === "string") return { filter: null, reason: filter };
  // The kernel must accept the program and the helper must work: load it for a `true`.
  const fd = fs.openSync(filter.bpfPath, "r");
  const probe = spawnSync(filter.loaderPath, ["exec", "3", "/bin/true"], {
    stdio: ["ignore", "ignore", "pipe", fd],
    timeout: 5000,
  });
  fs.closeSync(fd);
  if (probe.error)
    return { filter: null, reason: `the seccomp helper ${filter.loaderPath} does not run: ${probe.error.message}` };
  if (probe.status !== 0)
    return {
      filter: null,
      reason: `the kernel refused the filter: ${String(probe.stderr).trim() || `exit ${probe.status ?? probe.signal}`}`,
    };
  return { filter, built, ms: performance.now() - t0 };
}

/** Compiles into a scratch directory, then renames it into place: a concurrent engine's build wins or loses whole. */
function build(cc: string, dir: string, policy: string): string | null {
  const tmp = `${dir}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  fs.mkdirSync(tmp, { mode: 0o700 });
  try {
    const loader = path.join(tmp, "baton-seccomp");
    // Static: when it runs inside a sandbox no loader or library of the sandbox's view is used.
    const c = spawnSync(cc, ["-O2", "-Wall", "-static", "-o", loader, SOURCE, "-lseccomp"], {
      encoding: "utf8",
      timeout: 120_000,
    });
    if (c.status !== 0) {
      const err =
        `${c.stderr ?? ""}${c.error?.message ?? ""}`
          .split("\n")
          .find((l) => /error|cannot find|No such file/.test(l)) ?? `exit ${c.status}`;
      return `building the libseccomp helper failed (apt-get install gcc libseccomp-dev): ${err.trim()}`;
    }
    fs.chmodSync(loader, 0o711);
    const x = spawnSync(loader, ["export", path.join(tmp, "filter.bpf")], {
      input: policy,
      encoding: "utf8",
      timeout: 30_000,
    });
    if (x.status !== 0) return `libseccomp rejected the policy: ${(x.stderr ?? "").trim() || `exit ${x.status}`}`;
    fs.chmodSync(path.join(tmp, "filter.bpf"), 0o600);
    fs.writeFileSync(path.join(tmp, "policy.txt"), policy, { mode: 0o600 });
    try {
      fs.renameSync(tmp, dir);
    } catch (e) {
      // Another engine finished first (ENOTEMPTY/EEXIST): its build is the same bytes.
      if (!fs.existsSync(path.join(dir, "filter.bpf"))) throw e;
    }
    return null;
  } catch (e) {
    return `building the seccomp filter failed: ${(e as Error).message}`;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

function describe(dir: string): SeccompFilter | string {
  const bpfPath = path.join(dir, "filter.bpf");
  const loaderPath = path.join(dir, "baton-seccomp");
  try {
    const bpf = fs.readFileSync(bpfPath);
    if (bpf.length === 0 || bpf.length % 8 !== 0) return `${bpfPath} is not a compiled filter`;
    if ((fs.statSync(loaderPath).mode & 0o777) !== 0o711) fs.chmodSync(loaderPath, 0o711);
    return {
      bpfPath,
      loaderPath,
      instructions: bpf.length / 8,
      sha256: createHash("sha256").update(bpf).digest("hex"),
    };
  } catch (e) {
    return `the cached filter in ${dir} is unusable: ${(e as Error).message}`;
  }
}

/**
 * argv prefix that runs the rest under the filter, for a helper spawned on the host (the relays):
 * the caller hands the filter over as descriptor `fd` (see openFilter). Empty without a filter.
 */
export function seccompExecPrefix(filter: SeccompFilter | null, fd: number): string[] {
  return filter ? [filter.loaderPath, "exec", String(fd)] : [];
}

/** A descriptor of the compiled filter for a child's stdio (close it after the spawn), or "ignore". */
export function openFilter(filter: SeccompFilter | null): number | "ignore" {
  return filter ? fs.openSync(filter.bpfPath, "r") : "ignore";
}

export function closeFilter(fd: number | "ignore"): void {
  if (fd !== "ignore") fs.closeSync(fd);
}
