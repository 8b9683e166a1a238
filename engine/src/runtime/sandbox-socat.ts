import { spawn, type ChildProcess } from "node:child_process";
import { HOST_ENV } from "./sandbox-command.js";
import type { SandboxProcess } from "./sandbox-proc.js";
import { closeFilter, openFilter, seccompExecPrefix } from "./seccomp.js";

/**
 * Starts `socat <listen> <connect>` inside a sandbox's network namespace, confined like the sandbox
 * itself: nsenter joins only the netns (socket paths stay on the engine's filesystem), the sandbox's
 * seccomp filter applies (fd 3), and setpriv drops to the sandbox's uid with no groups, no
 * capabilities and no way to gain any. PDEATHSIG ends it with the engine, unless `outliveEngine`
 * (the egress relay of a sandbox that survives restarts: it lives in the sandbox's cgroups and so
 * dies with the sandbox, and the next engine keeps using it). Nothing of the engine's
 * environment is passed on (under npm start it may hold the console's secrets).
 *
 * The caller attaches the returned child to the sandbox's cgroups before it starts listening and reads
 * its stderr (piped) for errors: the egress relay and the preview relays each wait for their own
 * socket in their own way.
 */
export function spawnSocatInSandboxNet(
  proc: SandboxProcess,
  listen: string,
  connect: string,
  opts: {
    outliveEngine?: boolean;
    /**
     * socat's working directory: socket paths relative to it keep the sandbox's directory (named
     * after its id) out of its command line, which every local user can read.
     */
    cwd?: string;
  } = {},
): ChildProcess {
  const uid = String(proc.spec.uid);
  const filterFd = openFilter(proc.seccomp);
  try {
    return spawn(
      "nsenter",
      [
        `--net=/proc/${proc.targetPid}/ns/net`,
        "--",
        ...seccompExecPrefix(proc.seccomp, 3),
        "setpriv",
        `--reuid=${uid}`,
        `--regid=${uid}`,
        "--clear-groups",
        "--no-new-privs",
        "--inh-caps=-all",
        "--bounding-set=-all",
        ...(opts.outliveEngine ? [] : ["--pdeathsig", "KILL"]),
        "--",
        "socat",
        listen,
        connect,
      ],
      // Outliving the engine: its own session, and stderr to /dev/null rather than a pipe whose
      // reader (the engine) may be gone when socat writes a warning (SIGPIPE would end it).
      opts.outliveEngine
        ? { stdio: ["ignore", "ignore", "ignore", filterFd], env: HOST_ENV, detached: true, cwd: opts.cwd }
        : { stdio: ["ignore", "ignore", "pipe", filterFd], env: HOST_ENV, cwd: opts.cwd },
    );
  } finally {
    closeFilter(filterFd);
  }
}
