import { SECCOMP_FD, type SandboxProcess } from "./sandbox-proc.js";

/**
 * How anything runs inside a sandbox (exec, PTY sessions; never a template build, see
 * SandboxProcess.entry()): the host-side helpers (sh, prlimit, setpriv, nsenter: root until
 * nsenter switches to the sandbox user; then the seccomp loader) get only HOST_ENV plus an opaque
 * payload, and the sandbox's environment is applied inside, once nothing is privileged. Caller-chosen variables
 * such as LD_PRELOAD or BASH_ENV must never reach a root process on the host.
 */
export const HOST_ENV = { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", LANG: "C.UTF-8" };

/** The sandbox-side script travels in environment variables of this prefix (argv is readable by every host user). */
const PAYLOAD_VAR = "BATON_PAYLOAD_";
/** Characters per payload variable: one env string may not exceed 128 KiB (MAX_ARG_STRLEN). */
const PAYLOAD_CHUNK = 32 * 1024;

/**
 * Joins every cgroup of the sandbox (nothing the command forks escapes its limits), opens the
 * seccomp program and its loader for nsenter to hand on (SandboxProcess.entry; an empty first
 * path means no filter), then execs the rest.
 */
const PROLOGUE = `n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; if [ -n "$1" ]; then exec ${SECCOMP_FD - 1}<"$1" ${SECCOMP_FD}<"$2" || exit 125; fi; shift 2; exec "$@"`;

/**
 * Closes inherited descriptors above 2 before going on (node-pty's fork does not). dash cannot
 * close fds above 9; bash can.
 */
export const CLOSE_FDS =
  'for f in /proc/$$/fd/*; do f=${f##*/}; if [ "$f" -gt 2 ]; then exec {f}>&-; fi; done; exec "$@"';

/** Single-quotes a string for sh. */
export const shq = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

/**
 * Empties the environment the sandbox-side sh inherited. The host helpers are spawned with exactly
 * HOST_ENV plus the payload variables (unset before this runs), and sh adds PWD, OLDPWD and SHLVL:
 * a fixed list, so no fork is needed to find them.
 */
const CLEAR_ENV = [`unset ${[...Object.keys(HOST_ENV), "PWD", "OLDPWD", "SHLVL"].join(" ")}`];

export interface SpawnSpec {
  file: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * The spawn of a shell script run inside the sandbox as its user with exactly `env`:
 * host side [bash: close fds] → sh: join cgroups, open the seccomp filter and its loader → the
 * sandbox's entry (SandboxProcess.entry(): host binaries, then the static loader, which drops what
 * is left of privilege and installs the filter); sandbox side: sh evaluates the payload (clear env,
 * export `env`, then `script`).
 */
export function sandboxCommand(
  proc: SandboxProcess,
  env: Record<string, string>,
  script: string,
  opts: { closeFds?: boolean; argv0?: string } = {},
): SpawnSpec {
  const payload = [...CLEAR_ENV, ...Object.entries(env).map(([k, v]) => `export ${k}=${shq(v)}`), script].join("\n");
  const hostEnv: Record<string, string> = { ...HOST_ENV };
  const names: string[] = [];
  for (let at = 0; at < payload.length;) {
    let end = Math.min(at + PAYLOAD_CHUNK, payload.length);
    // Never split a surrogate pair: each half would become U+FFFD.
    if (end < payload.length && /[\udc00-\udfff]/.test(payload[end]!)) end--;
    const name = `${PAYLOAD_VAR}${names.length}`;
    hostEnv[name] = payload.slice(at, end);
    names.push(name);
    at = end;
  }
  // The payload is unset before it runs, so its own text never shows up in `export -p` above.
  const unpack = `p="${names.map((n) => "$" + n).join("")}"; unset ${names.join(" ")}; eval "$p"`;
  const procs = proc.cgroup.procsFiles;
  const filter = proc.seccomp ? [proc.seccomp.bpfPath, proc.seccomp.loaderPath] : ["", ""];
  const chain = [
    "/bin/sh",
    "-c",
    PROLOGUE,
    "sh",
    String(procs.length),
    ...procs,
    ...filter,
    ...proc.entry(),
    "/bin/sh",
    "-c",
    unpack,
    opts.argv0 ?? "baton",
  ];
  if (opts.closeFds)
    return { file: "/bin/bash", args: ["-c", CLOSE_FDS, opts.argv0 ?? "baton", ...chain], env: hostEnv };
  return { file: chain[0]!, args: chain.slice(1), env: hostEnv };
}
