import { execFile } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import readline from "node:readline";
import { promisify } from "node:util";
import type { EngineConfig } from "../config.js";
import { DEFAULT_EGRESS_DOMAINS, SIZES } from "../plans.js";
import type { Host } from "./host.js";
import type { TemplateLayers } from "./layers.js";
import { proxyEnv, startNetwork, type NetworkHandle } from "./network.js";
import { shq } from "./sandbox-command.js";
import { createSandboxDirs, removeSandboxDirs, SandboxProcess } from "./sandbox-proc.js";
import type { BaseImage } from "./templates.js";

const execFileP = promisify(execFile);

/**
 * Build sandboxes get the medium size: steps such as pip install are the heaviest thing here.
 * Exported with the pids cap for host admission (services/admission.ts): a queued build holds them.
 */
export const BUILD_SIZE = SIZES.medium;
export const BUILD_PIDS_MAX = 2048;
/** How much of the failing step's output the template's `error.output` keeps. */
export const ERROR_TAIL_BYTES = 4096;
/** How often the layer's disk use is checked against the cap while a step runs. */
const SIZE_CHECK_MS = 2000;
/** How long a step's output may keep arriving after it exited (from children it left behind), as for exec. */
const DRAIN_AFTER_EXIT_MS = 30;

/**
 * Where the build's control directory appears inside the build: /dev is the build init's own
 * tmpfs, so the mount point never lands in the layer (nor in the way of a step's `rm -rf /tmp/*`).
 */
const AGENT_DIR = "/dev/.baton-build";

/**
 * The build sandbox's init, and the only way anything runs in a build. bwrap starts it as pid 1
 * without a capability (and with no_new_privs) on a root the build has not written yet; the engine
 * never enters the build afterwards. Entering it as root to run a step, then executing anything
 * from the build's root (setpriv to drop privileges, prlimit, or any dynamically linked program and
 * the /etc/ld.so.preload its loader reads there), ran what the previous step had planted with
 * every capability: uid 0 keeps the capabilities of the namespace it enters across an exec, and
 * without a user namespace those are the host's.
 *
 * Protocol, on fd 9 (a socket to the engine; dash cannot name fds above 9): a step number per
 * line; the init runs `<n>.sh` of the control directory as its child, stdin /dev/null, stdout and
 * stderr on the FIFOs `<n>.out` and `<n>.err` (the engine made them, and the directory is
 * read-only inside), then answers "<n> <exit status>". It ignores the signals a step could send
 * it (the step's own shell gets them back: a subshell, not an asynchronous list, whose SIGINT and
 * SIGQUIT dash would ignore for good); while it waits for a step, dash's wait3 loop reaps the
 * orphans steps leave behind, and once the engine closes fd 9 it is the resident loop.
 */
function agentInit(dir: string): string {
  const d = shq(dir);
  return [
    // Nobody reads the init's stderr once it runs: a message there must never fill the pipe and block it.
    'trap "" HUP INT QUIT TERM USR1 USR2 PIPE; exec 2>/dev/null',
    "while read -r n <&9; do",
    '  case $n in ""|*[!0-9]*) continue ;; esac',
    `  (trap - HUP INT QUIT TERM USR1 USR2 PIPE; exec /bin/sh -c '. "$1"' baton-exec ${d}/"$n".sh </dev/null >${d}/"$n".out 2>${d}/"$n".err 9<&-)`,
    '  echo "$n $?" >&9',
    "done",
    "exec 9<&-",
    "while :; do /bin/sleep 2147483647 & wait $!; done",
  ].join("\n");
}

/** What every child of the build's init inherits from it (bwrap --clearenv, then PATH and HOME; sh adds the rest): a step starts without it. */
const INIT_ENV = ["PATH", "HOME", "PWD", "OLDPWD", "SHLVL"];

/** The script the agent sources for a step: exactly `env`, in /root, then the step as `sh -c` would run it. */
function stepScript(env: Record<string, string>, command: string): string {
  return [
    "set --",
    `unset ${INIT_ENV.join(" ")}`,
    ...Object.entries(env).map(([k, v]) => `export ${k}=${shq(v)}`),
    "cd -- /root || exit 126",
    `__baton_cmd=${shq(command)}`,
    'eval "$__baton_cmd"',
    "",
  ].join("\n");
}

/** Reads a FIFO the build writes into, without blocking: no EOF until a writer has come and gone. */
function readFifo(p: string): net.Socket {
  const fd = fs.openSync(p, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW);
  return new net.Socket({ fd, readable: true, writable: false });
}

/** The agent's answers, by step number; null when the agent (or the whole build sandbox) is gone. */
class AgentAnswers {
  private waiting = new Map<number, (code: number | null) => void>();
  private gone = false;
  constructor(proc: SandboxProcess) {
    const answers = proc.agentIo!;
    readline.createInterface({ input: answers, crlfDelay: Infinity }).on("line", (line) => {
      const m = /^(\d+) (\d+)$/.exec(line);
      if (m) this.settle(Number(m[1]), Number(m[2]));
    });
    answers.once("close", () => this.end());
    proc.onExit(() => this.end());
  }
  next(step: number): Promise<number | null> {
    return new Promise((resolve) => (this.gone ? resolve(null) : this.waiting.set(step, resolve)));
  }
  private settle(step: number, code: number | null): void {
    this.waiting.get(step)?.(code);
    this.waiting.delete(step);
  }
  private end(): void {
    this.gone = true;
    for (const step of [...this.waiting.keys()]) this.settle(step, null);
  }
}

export interface BuildRequest {
  id: string;
  /**
   * The build slot's host uid (runtime/host.ts buildUid): every process of the build runs as it,
   * root only inside the build's own user namespace; no sandbox and no other build has it.
   */
  uid: number;
  image: BaseImage;
  steps: string[];
  env: Record<string, string>;
}

export interface BuildLine {
  step_index: number | null;
  stream: "stdout" | "stderr" | "system";
  data: string;
}

export type BuildOutcome =
  | { ok: true; size_mb: number }
  | {
      ok: false;
      error: { step_index: number | null; step: string | null; exit_code: number | null; output: string };
      reason: string;
    };

/** Splits a stream into lines (keeping the newline) so the build log pages by line, not by pipe chunk. */
class LineSplitter {
  private partial = "";
  private decoder = new TextDecoder("utf-8");
  constructor(
    private readonly emit: (line: string) => void,
    private readonly maxLine = 8192,
  ) {}
  push(chunk: Buffer): void {
    this.partial += this.decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = this.partial.indexOf("\n")) !== -1) {
      this.emit(this.partial.slice(0, nl + 1));
      this.partial = this.partial.slice(nl + 1);
    }
    while (this.partial.length > this.maxLine) {
      this.emit(this.partial.slice(0, this.maxLine));
      this.partial = this.partial.slice(this.maxLine);
    }
  }
  flush(): void {
    this.partial += this.decoder.decode();
    if (this.partial) this.emit(this.partial);
    this.partial = "";
  }
}

/** The last `cap` bytes of a step's combined output, for the failed template's `error.output`. */
class Tail {
  private text = "";
  constructor(private readonly cap: number) {}
  push(s: string): void {
    this.text += s;
    if (this.text.length > this.cap * 2) this.text = this.text.slice(-this.cap);
  }
  value(): string {
    const b = Buffer.from(this.text);
    return b.length <= this.cap
      ? this.text
      : b
          .subarray(b.length - this.cap)
          .toString("utf8")
          .replace(/^\uFFFD+/, "");
  }
}

/**
 * Runs a template's steps in a build sandbox and leaves the result in its layer. The build sandbox
 * is isolated like any sandbox (namespaces, cgroups, no view of the host beyond its base image,
 * /proc/sys read-only), runs every step as uid 0 with HOME=/root (as the hosted service builds
 * templates), but that uid 0 is root of the build's own user namespace only, the slot's
 * unprivileged host uid outside, without capabilities; its root filesystem is the read-write
 * overlay of runtime/layers.ts, idmapped for that uid: whatever a step writes under /usr, /opt,
 * /etc or a runtime's prefix lands in the layer (owned by the host's root on disk, as before),
 * and nowhere on the host.
 */
export class TemplateBuild {
  private proc: SandboxProcess | null = null;
  private answers: AgentAnswers | null = null;
  /** The control directory the agent reads steps from (host side). */
  private ctl = "";
  private env: Record<string, string> = {};
  private cancelled: string | null = null;
  private currentKill: (() => void) | null = null;

  constructor(
    private readonly host: Host,
    private readonly config: EngineConfig,
    private readonly layers: TemplateLayers,
    private readonly req: BuildRequest,
    private readonly log: (line: BuildLine) => void,
  ) {}

  /** Stops the build (template deleted, engine shutting down); run() then resolves as failed with `reason`. */
  cancel(reason: string): void {
    this.cancelled ??= reason;
    this.currentKill?.();
  }

  async run(): Promise<BuildOutcome> {
    const { id, image } = this.req;
    const system = (data: string, step_index: number | null = null) =>
      this.log({ step_index, stream: "system", data: data.endsWith("\n") ? data : data + "\n" });
    const started = performance.now();
    // The whole build has a deadline too: steps just under the step timeout each cannot hold a slot for hours.
    const limitS = this.config.templateBuildTimeoutS;
    const deadline = setTimeout(
      () => this.cancel(`the build ran longer than ${limitS} s (ORKESTR_ENGINE_TEMPLATE_BUILD_TIMEOUT_S)`),
      limitS * 1000,
    );
    let unmountRoot: (() => Promise<void>) | null = null;
    let network: NetworkHandle | null = null;
    const scratch = this.layers.buildScratch(id);
    const uid = this.req.uid;
    try {
      await this.layers.prepare(id, image);
      const mounted = await this.layers.mountWritable(id, image, uid);
      unmountRoot = mounted.unmount;
      const memoryBytes = BUILD_SIZE.memory_mb * 1024 * 1024;
      // The build's scratch is its uid's (root's, seen from inside).
      const dirs = await createSandboxDirs(
        scratch,
        uid,
        this.host.scratchTmpfs ? { bytes: memoryBytes, inodes: 262_144 } : null,
      );
      await fsp.chmod(dirs.tmp, 0o1777);
      // The agent's control directory, beside (not inside) what the build can write: root's, so
      // only the engine names what is in it; the init, the build's uid, may pass through it
      // (0711) to read its step scripts and write its FIFOs, which are that uid's, through a
      // read-only bind.
      this.ctl = path.join(scratch, "ctl");
      await fsp.mkdir(this.ctl, { mode: 0o711 });
      await fsp.chmod(this.ctl, 0o711);
      const fifos = this.req.steps.flatMap((_, i) => [`${i}.out`, `${i}.err`].map((f) => path.join(this.ctl, f)));
      if (fifos.length) await execFileP("mkfifo", ["-m", "600", "--", ...fifos]);
      for (const f of fifos) await fsp.chown(f, uid, uid);
      const buildId = `bld_${id.slice("tmpl_".length)}`;
      const cgroup = await this.host.cgroups.create(buildId, {
        memoryBytes,
        cpu: BUILD_SIZE.cpu,
        pidsMax: BUILD_PIDS_MAX,
      });
      const networkMode = this.config.templateBuildNetwork;
      this.env = {
        PATH: image.path,
        HOME: "/root",
        USER: "root",
        LANG: "C.UTF-8",
        DEBIAN_FRONTEND: "noninteractive",
        PIP_ROOT_USER_ACTION: "ignore",
        ...image.env,
        ...(networkMode === "restricted" ? proxyEnv() : {}),
        ...this.req.env,
      };
      this.proc = await SandboxProcess.start(
        this.host,
        {
          id: buildId,
          uid,
          dir: scratch,
          image,
          env: this.env,
          network: networkMode,
          limits: { memoryBytes, pidsMax: BUILD_PIDS_MAX },
          rootfs: { path: mounted.root, writable: true },
          build: true,
          agent: { ctl: this.ctl, dest: AGENT_DIR, init: agentInit(AGENT_DIR) },
        },
        cgroup,
      );
      this.answers = new AgentAnswers(this.proc);
      network = await startNetwork(this.host, this.proc, networkMode, DEFAULT_EGRESS_DOMAINS, this.config);
      system(
        `build sandbox ready in ${Math.round(performance.now() - started)} ms (base image ${image.id}, network ${networkMode}${networkMode === "restricted" ? ": HTTPS to the default egress list through the proxy" : ""})`,
      );

      for (const [i, step] of this.req.steps.entries()) {
        if (this.cancelled) break;
        const outcome = await this.runStep(i, step, system);
        if (outcome) return outcome;
      }
      if (this.cancelled) return this.failed(null, null, null, this.cancelled, this.cancelled);
      system(`all ${this.req.steps.length} step(s) succeeded in ${Math.round(performance.now() - started)} ms`);
    } catch (e) {
      const message = (e as Error).message;
      return this.failed(
        null,
        null,
        null,
        `the build sandbox failed: ${message}`,
        this.cancelled ?? `build sandbox failed: ${message}`,
      );
    } finally {
      clearTimeout(deadline);
      await this.teardown(network, unmountRoot, scratch);
    }
    await this.layers.scrub(id);
    const size_mb = await this.layers.sizeMb(id);
    system(`layer captured: ${size_mb} MiB`);
    return { ok: true, size_mb };
  }

  private failed(
    step_index: number | null,
    step: string | null,
    exit_code: number | null,
    output: string,
    reason: string,
  ): BuildOutcome {
    return { ok: false, error: { step_index, step, exit_code, output }, reason };
  }

  /**
   * Has the agent run step `i` and streams its output. A step that must stop (timeout, size cap,
   * cancel) ends the whole build sandbox: the build has failed by then anyway.
   */
  private startStep(
    i: number,
    command: string,
    timeoutMs: number,
    onStdout: (c: Buffer) => void,
    onStderr: (c: Buffer) => void,
  ): { done: Promise<{ exit_code: number; duration_ms: number; timed_out: boolean }>; kill: () => void } {
    const proc = this.proc!;
    const started = performance.now();
    let timedOut = false;
    const kill = () => void proc.kill().catch(() => undefined);
    const done = (async () => {
      const script = path.join(this.ctl, `${i}.sh`);
      await fsp.writeFile(script, stepScript(this.env, command), { mode: 0o600, flag: "wx" });
      await fsp.chown(script, this.req.uid, this.req.uid);
      const streams = [readFifo(path.join(this.ctl, `${i}.out`)), readFifo(path.join(this.ctl, `${i}.err`))];
      const ended = streams.map(
        (s) =>
          new Promise<void>((r) =>
            s
              .on("error", () => r())
              .once("end", r)
              .once("close", r),
          ),
      );
      streams[0]!.on("data", onStdout);
      streams[1]!.on("data", onStderr);
      const answer = this.answers!.next(i);
      const timer = setTimeout(() => {
        timedOut = true;
        kill();
      }, timeoutMs);
      try {
        proc.agentIo!.write(`${i}\n`);
        const code = await answer;
        // Output still in the FIFOs is read for a moment; a background child may hold them open.
        await Promise.race([Promise.all(ended), new Promise((r) => setTimeout(r, DRAIN_AFTER_EXIT_MS))]);
        return {
          exit_code: timedOut ? 124 : (code ?? 137),
          duration_ms: Math.round(performance.now() - started),
          timed_out: timedOut,
        };
      } finally {
        clearTimeout(timer);
        for (const s of streams) s.destroy();
      }
    })();
    return { done, kill };
  }

  /** Runs one step; returns a failure, or null when the step exited 0. */
  private async runStep(
    i: number,
    step: string,
    system: (d: string, i?: number | null) => void,
  ): Promise<BuildOutcome | null> {
    const tail = new Tail(ERROR_TAIL_BYTES);
    const out = new LineSplitter((data) => {
      tail.push(data);
      this.log({ step_index: i, stream: "stdout", data });
    });
    const err = new LineSplitter((data) => {
      tail.push(data);
      this.log({ step_index: i, stream: "stderr", data });
    });
    system(`step ${i + 1}/${this.req.steps.length}: ${step}`, i);
    const timeoutMs = this.config.templateStepTimeoutS * 1000;
    const running = this.startStep(
      i,
      step,
      timeoutMs,
      (c) => out.push(c),
      (c) => err.push(c),
    );
    let overSize: string | null = null;
    this.currentKill = running.kill;
    // The layer sits on the host disk: a step that writes past the cap is stopped.
    const sizeWatch = setInterval(() => {
      void this.layers.sizeMb(this.req.id).then(
        (mb) => {
          if (mb > this.config.templateMaxMb && !overSize) {
            overSize = `the template layer grew past ${this.config.templateMaxMb} MiB`;
            running.kill();
          }
        },
        () => undefined,
      );
    }, SIZE_CHECK_MS);
    let result;
    try {
      result = await running.done;
    } finally {
      clearInterval(sizeWatch);
      this.currentKill = null;
    }
    out.flush();
    err.flush();
    const why =
      this.cancelled ??
      overSize ??
      (result.timed_out ? `step timed out after ${this.config.templateStepTimeoutS} s` : null);
    system(
      `step ${i + 1} exited with code ${result.exit_code} in ${result.duration_ms} ms${why ? ` (${why})` : ""}`,
      i,
    );
    if (result.exit_code === 0 && !why) return null;
    const output = why
      ? `${tail.value()}${tail.value() && !tail.value().endsWith("\n") ? "\n" : ""}[${why}]`
      : tail.value();
    return this.failed(i, step, result.exit_code, output, why ?? `step ${i + 1} exited with code ${result.exit_code}`);
  }

  /** Kills the build sandbox and releases its network, cgroups, scratch and mounts, whatever happened. */
  private async teardown(
    network: NetworkHandle | null,
    unmountRoot: (() => Promise<void>) | null,
    scratch: string,
  ): Promise<void> {
    if (this.proc) await this.proc.kill().catch(() => undefined);
    await network?.close().catch(() => undefined);
    await removeSandboxDirs(scratch, this.host.scratchTmpfs);
    await unmountRoot?.().catch(() => undefined);
    await this.layers.dropBuildLeftovers(this.req.id).catch(() => undefined);
  }
}
