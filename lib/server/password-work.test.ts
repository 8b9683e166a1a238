import "server-only";
import { afterEach, describe, expect, it, vi } from "vitest";

// scrypt is replaced by a stand-in that counts the calls in progress and finishes only when the
// test says so: what is measured is how many run at once, with no timing involved.
const work = vi.hoisted(() => ({ inFlight: 0, peak: 0, pending: [] as Array<() => void> }));
vi.mock("node:crypto", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:crypto")>();
  const scrypt = (
    _password: unknown,
    _salt: unknown,
    keylen: number,
    _opts: unknown,
    callback: (err: Error | null, key: Buffer) => void,
  ) => {
    work.inFlight++;
    work.peak = Math.max(work.peak, work.inFlight);
    work.pending.push(() => {
      work.inFlight--;
      callback(null, Buffer.alloc(keylen, 7));
    });
  };
  return { ...real, default: { ...real, scrypt }, scrypt };
});

const { hashPassword, PASSWORD_WORK, PasswordWorkBusyError, verifyPassword } = await import("./crypto");
const { describeError } = await import("./errors");

/** Lets every promise chain that can move on do so (no I/O is involved: scrypt is the stand-in). */
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

const STORED = `scrypt$16384$8$1$${Buffer.alloc(16, 1).toString("base64").replace(/=+$/, "")}$${Buffer.alloc(32, 7).toString("base64").replace(/=+$/, "")}`;

describe("password hashing's concurrency cap", () => {
  afterEach(async () => {
    while (work.pending.length) {
      work.pending.shift()!();
      await settle();
    }
    work.peak = 0;
  });

  it(`runs at most ${PASSWORD_WORK.concurrency} scrypt computations at once; the rest wait their turn`, async () => {
    const checks = Array.from({ length: 10 }, (_, i) =>
      i % 2 ? verifyPassword(`guess ${i}`, STORED) : hashPassword(`password ${i}`),
    );
    await settle();
    expect(work.inFlight).toBe(PASSWORD_WORK.concurrency);
    let finished = 0;
    while (work.pending.length) {
      work.pending.shift()!();
      finished++;
      await settle();
      expect(work.inFlight).toBeLessThanOrEqual(PASSWORD_WORK.concurrency);
    }
    expect(finished).toBe(10);
    expect(work.peak).toBe(PASSWORD_WORK.concurrency);
    const results = await Promise.all(checks);
    expect(results.filter((r) => r === true)).toHaveLength(5); // the stand-in's key matches STORED
  });

  it("refuses work beyond the queue at once (503 server_busy with Retry-After), and takes it again once there is room", async () => {
    const capacity = PASSWORD_WORK.concurrency + PASSWORD_WORK.maxQueue;
    const admitted = Array.from({ length: capacity }, (_, i) => verifyPassword(`guess ${i}`, STORED));
    await settle();
    const refused = await verifyPassword("one too many", STORED).then(
      () => null,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(PasswordWorkBusyError);
    expect(describeError(refused)).toMatchObject({ status: 503, body: { code: "server_busy" }, retryAfterSeconds: 1 });
    expect(work.inFlight).toBe(PASSWORD_WORK.concurrency);

    work.pending.shift()!();
    await settle();
    const later = verifyPassword("room again", STORED);
    await settle();
    while (work.pending.length) {
      work.pending.shift()!();
      await settle();
    }
    expect(await later).toBe(true);
    expect(await Promise.all(admitted)).toHaveLength(capacity);
  });
});
