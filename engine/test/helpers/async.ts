// Waiting in tests, written once for the engine's and the console's suites (and anything else that
// runs TypeScript: no test-runner import). Playwright specs use their runner's expect.poll/toPass.

export interface PollOptions {
  /** Give up after this long (ms). */
  timeout?: number;
  /** Between two tries (ms). */
  interval?: number;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Tries `check` until it returns without throwing (an `expect` inside, typically) and returns its
 * value; past the timeout, throws its last error, so the failure reads like the assertion's.
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  { timeout = 10_000, interval = 100 }: PollOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeout;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await pause(interval);
    }
  }
}

/**
 * Polls `probe` until it returns something truthy and returns that; past the timeout, throws
 * "timed out after … waiting for <what>". A probe that throws fails at once (a bug, not "not yet").
 */
export async function until<T>(
  what: string,
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  { timeout = 20_000, interval = 50 }: PollOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${what}`);
    await pause(interval);
  }
}

/**
 * The error `promise` rejects with, when it is a `type`; any other rejection is rethrown as it is,
 * and a fulfilment fails. For tests that look into an error's fields (code, status, detail).
 */
export async function rejectsWith<E>(
  promise: Promise<unknown>,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any constructor: error classes take any arguments
  type: abstract new (...args: any[]) => E,
): Promise<E> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof type) return err;
    throw err;
  }
  throw new Error(`expected a rejection with ${type.name}, but the promise fulfilled`);
}

/** Polls `check` every 50 ms for up to `ms`; whether it held (for tests that assert on the answer). */
export async function waitUntil(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}
