import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import type { SandboxProcess } from "./sandbox-proc.js";
import { sandboxCommand, shq } from "./sandbox-command.js";

/** Per-stream cap on what a plain exec returns (POST /v1/sandboxes/:id/exec: 1 MiB each of `stdout` and `stderr`, then `truncated`). */
export const OUTPUT_CAP_BYTES = 1024 * 1024;
/** How long output may keep arriving after the command exits (from children it left behind). */
const DRAIN_AFTER_EXIT_MS = 30;

export interface ExecRequest {
  command: string;
  cwd: string;
  env: Record<string, string>;
  stdin?: string | null;
  timeoutMs: number;
}

export interface ExecResult {
  exit_code: number;
  duration_ms: number;
  timed_out: boolean;
  signal: string | null;
}

/**
 * Starts `command` as the sandbox user inside the sandbox's namespaces and cgroups, in `cwd`,
 * with the sandbox's environment plus `env` (applied inside the sandbox, never on the host).
 */
export function spawnInSandbox(proc: SandboxProcess, req: Pick<ExecRequest, "command" | "cwd" | "env">): ChildProcess {
  // The command is evaluated like `sh -c` would, after entering the working directory inside the sandbox.
  const script = `cd -- ${shq(req.cwd)} || exit 126\n__baton_cmd=${shq(req.command)}\neval "$__baton_cmd"`;
  const spec = sandboxCommand(proc, { ...proc.spec.env, ...req.env }, script, { argv0: "baton-exec" });
  return spawn(spec.file, spec.args, {
    env: spec.env,
    stdio: ["pipe", "pipe", "pipe"],
    // Own process group: a timeout or an abort kills the whole command tree.
    detached: true,
  });
}

/**
 * Every process an exec starts inherits this variable, so a timeout or an abort can find and kill
 * all of them, even those that left the process group with setsid.
 */
export const EXEC_TAG = "ORKESTR_EXEC_ID";

/** Kills every process of the sandbox tagged with `execId`; the sandbox is frozen meanwhile so nothing forks away. */
export async function killTagged(proc: SandboxProcess, execId: string): Promise<void> {
  const needle = Buffer.from(`${EXEC_TAG}=${execId}\0`);
  const sweep = () => {
    let found = 0;
    for (const pid of proc.cgroup.pids()) {
      try {
        if (!fs.readFileSync(`/proc/${pid}/environ`).includes(needle)) continue;
        process.kill(pid, "SIGKILL");
        found++;
      } catch {
        /* exited meanwhile */
      }
    }
    return found;
  };
  await proc.cgroup.whileFrozen(sweep);
}

export interface ExecHandlers {
  onStdout(chunk: Buffer): void;
  onStderr(chunk: Buffer): void;
}

export interface RunningExec {
  done: Promise<ExecResult>;
  kill(): void;
  /** Backpressure: stop reading the command's output until resumeOutput (the pipe then blocks the command). */
  pauseOutput(): void;
  resumeOutput(): void;
  child: ChildProcess;
}

export function runExec(proc: SandboxProcess, req: ExecRequest, handlers: ExecHandlers): RunningExec {
  const started = performance.now();
  const execId = randomUUID();
  const child = spawnInSandbox(proc, { ...req, env: { ...req.env, [EXEC_TAG]: execId } });
  let timedOut = false;
  const killTree = () => {
    try {
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    } catch {
      /* already gone */
    }
    // Whatever left the process group (setsid, daemons) still carries the exec's tag.
    void killTagged(proc, execId);
  };
  let abandon: (() => void) | null = null;
  const timer = setTimeout(() => {
    timedOut = true;
    killTree();
    // Killed tasks of a sandbox paused meanwhile only die on resume: answer without waiting for them.
    setTimeout(() => abandon?.(), 1000).unref();
  }, req.timeoutMs);
  child.stdout!.on("data", handlers.onStdout);
  child.stderr!.on("data", handlers.onStderr);
  child.stdin!.on("error", () => undefined);
  if (req.stdin != null) child.stdin!.end(req.stdin);
  else child.stdin!.end();

  const done = new Promise<ExecResult>((resolve, reject) => {
    let finished = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      // A background child (`server &`) may hold the pipes open: stop reading, never wait on it.
      child.stdout!.destroy();
      child.stderr!.destroy();
      resolve({
        exit_code: timedOut ? 124 : (code ?? (signal ? 128 + (signalNumber(signal) ?? 9) : 1)),
        duration_ms: Math.round(performance.now() - started),
        timed_out: timedOut,
        signal: signal ?? null,
      });
    };
    abandon = () => finish(null, "SIGKILL");
    child.once("error", (e) => {
      clearTimeout(timer);
      finished = true;
      reject(e);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      // Output still in the pipes is read for a moment; then the pipes are let go.
      const drain = setTimeout(() => finish(code, signal), DRAIN_AFTER_EXIT_MS);
      const ended = (s: NodeJS.ReadableStream & { readableEnded: boolean }) =>
        s.readableEnded ? Promise.resolve() : new Promise<void>((r) => s.once("end", () => r()));
      void Promise.all([ended(child.stdout!), ended(child.stderr!)]).then(() => {
        clearTimeout(drain);
        finish(code, signal);
      });
    });
  });
  return {
    done,
    kill: killTree,
    pauseOutput: () => {
      child.stdout!.pause();
      child.stderr!.pause();
    },
    resumeOutput: () => {
      child.stdout!.resume();
      child.stderr!.resume();
    },
    child,
  };
}

const SIGNALS: Record<string, number> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGKILL: 9,
  SIGTERM: 15,
  SIGSEGV: 11,
  SIGABRT: 6,
  SIGPIPE: 13,
};
function signalNumber(sig: string): number | undefined {
  return SIGNALS[sig];
}

/** Collects output up to a cap, remembering whether anything was dropped. */
export class CappedBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  constructor(private readonly cap = OUTPUT_CAP_BYTES) {}
  push(chunk: Buffer): void {
    if (this.size >= this.cap) {
      this.truncated = true;
      return;
    }
    const room = this.cap - this.size;
    if (chunk.length > room) {
      this.chunks.push(chunk.subarray(0, room));
      this.size = this.cap;
      this.truncated = true;
    } else {
      this.chunks.push(chunk);
      this.size += chunk.length;
    }
  }
  text(): string {
    return Buffer.concat(this.chunks).toString("utf8");
  }
}
