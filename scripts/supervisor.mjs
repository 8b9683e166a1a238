// The process supervisor behind `npm start` (scripts/start.mjs): keeps a child running, restarting it
// with capped exponential backoff when it exits on its own, and stops it on request. One crashed
// engine must not take the console down with it: each child is supervised on its own.
import { spawn } from "node:child_process";

/** Restart policy; the environment can change it (BATON_RESTART_MIN_MS, _MAX_MS, _HEALTHY_MS). */
export const RESTART_DEFAULTS = { minMs: 1_000, maxMs: 30_000, healthyMs: 60_000 };

/**
 * The wait before restart number `failures` (1-based, counted since the child last ran healthy):
 * minMs, doubling, capped at maxMs.
 */
export function backoffMs(failures, { minMs, maxMs }) {
  return Math.min(minMs * 2 ** Math.max(0, failures - 1), maxMs);
}

/** The policy from the environment, each value a whole number of ms or the default. */
export function restartPolicy(env = process.env) {
  const read = (name, fallback) => {
    const v = Number(env[name]);
    return Number.isInteger(v) && v >= 0 ? v : fallback;
  };
  const minMs = read("BATON_RESTART_MIN_MS", RESTART_DEFAULTS.minMs);
  return {
    minMs,
    maxMs: Math.max(minMs, read("BATON_RESTART_MAX_MS", RESTART_DEFAULTS.maxMs)),
    healthyMs: read("BATON_RESTART_HEALTHY_MS", RESTART_DEFAULTS.healthyMs),
  };
}

function describeExit(code, signal) {
  return signal ? signal : `code ${code}`;
}

function seconds(ms) {
  return ms < 10_000 ? `${(ms / 1000).toFixed(ms % 1000 ? 1 : 0)} s` : `${Math.round(ms / 1000)} s`;
}

/**
 * Runs `cmd args` as `name` and keeps it running. A child that ran at least `healthyMs` resets the
 * backoff to `minMs`. `stop(signal)` ends it for good: no restart, and a pending one is cancelled.
 * `spawnChild` is injectable for tests.
 */
export function supervise({
  name,
  cmd,
  args,
  env,
  policy = RESTART_DEFAULTS,
  log = (m) => console.error(m),
  spawnChild = (c, a, e) => spawn(c, a, { stdio: "inherit", env: e }),
  now = () => Date.now(),
  setTimer = setTimeout,
  clearTimer = clearTimeout,
}) {
  let child = null;
  let failures = 0;
  let timer = null;
  let stopping = false;
  let resolveStopped;
  const stopped = new Promise((r) => (resolveStopped = r));

  const start = () => {
    timer = null;
    const startedAt = now();
    child = spawnChild(cmd, args, env);
    log(`[start] ${name} started (pid ${child.pid})`);
    child.on("error", (err) => log(`[start] ${name} could not be started: ${err.message}`));
    child.on("exit", (code, signal) => {
      child = null;
      if (stopping) {
        log(`[start] ${name} stopped (${describeExit(code, signal)})`);
        resolveStopped();
        return;
      }
      const ranMs = now() - startedAt;
      if (ranMs >= policy.healthyMs) failures = 0;
      failures += 1;
      const delay = backoffMs(failures, policy);
      log(
        `[start] ${name} exited (${describeExit(code, signal)}) after ${seconds(ranMs)}; ` +
          `restarting in ${seconds(delay)} (restart ${failures} since it last ran ${seconds(policy.healthyMs)})`,
      );
      timer = setTimer(start, delay);
    });
  };
  start();

  return {
    get pid() {
      return child?.pid ?? null;
    },
    /** Signals the child and resolves once it has exited; with none running, at once. */
    stop(signal = "SIGTERM") {
      stopping = true;
      if (timer) {
        clearTimer(timer);
        timer = null;
      }
      if (!child) resolveStopped();
      else child.kill(signal);
      return stopped;
    },
    /** Sends a signal without stopping the supervision (a second Ctrl-C: SIGKILL). */
    kill(signal) {
      child?.kill(signal);
    },
  };
}

/**
 * ORKESTR_ENGINE_WEBHOOK_ALLOW for the engine `npm start` runs beside the console: the console's
 * built-in receiver, `<origin>/api/hooks/`, so "Receive in Baton" works out of the box while every
 * other internal address stays refused. A path prefix, not the whole origin: the engine must not be
 * made to POST to the console's /login or /api/setup and show a tenant the answer. The origin is
 * the console's public one (BATON_URL) when set, else its own loopback listener
 * `http://127.0.0.1:$PORT` (the console serves loopback names only then); whatever the operator
 * listed already is kept.
 */
export const CONSOLE_HOOKS_PATH = "/api/hooks/";

export function engineWebhookAllow(env = process.env) {
  const entries = (env.ORKESTR_ENGINE_WEBHOOK_ALLOW ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  let origin = `http://127.0.0.1:${env.PORT?.trim() || "3000"}`;
  if (env.BATON_URL?.trim()) {
    try {
      origin = new URL(env.BATON_URL.trim()).origin;
    } catch {
      // the console refuses to start with it and says why; the engine keeps the loopback origin
    }
  }
  const own = origin + CONSOLE_HOOKS_PATH;
  if (!entries.includes(own)) entries.push(own);
  return entries.join(",");
}
