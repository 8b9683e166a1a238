import "server-only";

// A counting semaphore with a bounded queue: at most `concurrency` tasks run at once, up to
// `maxQueue` more wait in order, and a task beyond that is refused at once (`onFull()` is thrown)
// instead of piling up. Used around scrypt (lib/server/crypto.ts), so a flood of sign-ins cannot
// occupy every CPU and libuv thread.

export interface Limiter {
  run<T>(task: () => Promise<T>): Promise<T>;
  /** Tasks running now. */
  readonly active: number;
  /** Tasks waiting for a slot. */
  readonly queued: number;
}

export function createLimiter(opts: { concurrency: number; maxQueue: number; onFull: () => Error }): Limiter {
  const concurrency = Math.max(1, Math.floor(opts.concurrency));
  let active = 0;
  const waiting: Array<() => void> = [];

  const acquire = async (): Promise<void> => {
    if (active < concurrency) {
      active++;
      return;
    }
    if (waiting.length >= opts.maxQueue) throw opts.onFull();
    // The slot is handed over by release() (active stays counted), so no newcomer can jump the queue.
    await new Promise<void>((resolve) => waiting.push(resolve));
  };
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else active--;
  };

  return {
    async run(task) {
      await acquire();
      try {
        return await task();
      } finally {
        release();
      }
    },
    get active() {
      return active;
    },
    get queued() {
      return waiting.length;
    },
  };
}
