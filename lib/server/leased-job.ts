import "server-only";
import type { Db } from "./db/index";

// A background job every Baton process schedules for itself (housekeeping, the usage reader): a
// first run a little after start, then one per interval, never two of this process's runs at once,
// timers unref'd so they never keep a process alive. Across processes it is the job's own `run`
// that takes its lease (lib/server/db/leases.ts) and answers null when another process holds it.

export interface TimerApi {
  setTimeout(fn: () => void, ms: number): { unref?: () => unknown };
  setInterval(fn: () => void, ms: number): { unref?: () => unknown };
  clearTimeout(handle: unknown): void;
  clearInterval(handle: unknown): void;
}

export interface LeasedJobOptions<T> {
  /** The database, or null while there is none open (then the run is skipped). */
  db: () => Promise<Db> | null;
  /** One run: takes the job's lease, or answers null when this process did not get it. */
  run: (db: Db) => Promise<T | null>;
  intervalMs: number;
  firstDelayMs: number;
  timers?: TimerApi;
  /** Said when a run throws (the run is skipped; the next one tries again). */
  log: (message: string, err?: unknown) => void;
  /** What the log calls a run that failed, e.g. "a pass failed (the next one will try again)". */
  failure: string;
}

export interface LeasedJobSchedule<T> {
  /** The run the timers start; exposed for tests and shutdown hooks. A run in progress is shared. */
  tick(): Promise<T | null>;
  stop(): void;
}

export function scheduleLeasedJob<T>(options: LeasedJobOptions<T>): LeasedJobSchedule<T> {
  const timers = options.timers ?? (globalThis as unknown as TimerApi);
  let running: Promise<T | null> | null = null;

  const tick = (): Promise<T | null> => {
    // A slow run is not overlapped by the next one.
    if (running) return running;
    const pass = (async () => {
      try {
        const pending = options.db();
        if (!pending) return null;
        return await options.run(await pending);
      } catch (err) {
        options.log(options.failure, err);
        return null;
      }
    })();
    running = pass;
    void pass.finally(() => {
      if (running === pass) running = null;
    });
    return pass;
  };

  let interval: unknown = null;
  const first = timers.setTimeout(() => {
    void tick();
    const handle = timers.setInterval(() => void tick(), options.intervalMs);
    handle.unref?.();
    interval = handle;
  }, options.firstDelayMs);
  first.unref?.();

  return {
    tick,
    stop() {
      timers.clearTimeout(first);
      if (interval !== null) timers.clearInterval(interval);
    },
  };
}
