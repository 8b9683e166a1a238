import { describe, expect, it } from "vitest";
import { eventually, rejectsWith, until } from "./helpers/async.js";

// The waiting helpers every suite shares (engine/test/helpers/async.ts): a helper that passed when
// it should not would hide failures in all of them.

class Teapot extends Error {
  code = "teapot";
}

describe("eventually", () => {
  it("retries until the check stops throwing, and returns its value", async () => {
    let tries = 0;
    const v = await eventually(
      () => {
        if (++tries < 3) throw new Error("not yet");
        return tries;
      },
      { interval: 1 },
    );
    expect(v).toBe(3);
  });

  it("throws the check's last error past the timeout", async () => {
    let tries = 0;
    const err = await rejectsWith(
      eventually(() => Promise.reject(new Error(`try ${++tries}`)), { timeout: 30, interval: 5 }),
      Error,
    );
    expect(tries).toBeGreaterThan(1);
    expect(err.message).toBe(`try ${tries}`);
  });
});

describe("until", () => {
  it("returns the first truthy value", async () => {
    let n = 0;
    expect(await until("n to reach 2", () => (++n >= 2 ? { n } : false), { interval: 1 })).toEqual({ n: 2 });
  });

  it("names what it waited for when it times out", async () => {
    await expect(until("the impossible", () => undefined, { timeout: 20, interval: 5 })).rejects.toThrow(
      "timed out after 20 ms waiting for the impossible",
    );
  });

  it("fails at once when the probe throws", async () => {
    let calls = 0;
    const started = Date.now();
    await expect(
      until(
        "a broken probe",
        () => {
          calls++;
          throw new Error("bug");
        },
        { timeout: 5_000 },
      ),
    ).rejects.toThrow("bug");
    expect(calls).toBe(1);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe("rejectsWith", () => {
  it("returns the rejection when it is of the type, typed", async () => {
    const err = await rejectsWith(Promise.reject(new Teapot("short and stout")), Teapot);
    expect(err.code).toBe("teapot");
  });

  it("rethrows a rejection of another type as it is", async () => {
    const other = new TypeError("fetch failed");
    await expect(rejectsWith(Promise.reject(other), Teapot)).rejects.toBe(other);
  });

  it("fails when the promise fulfils", async () => {
    await expect(rejectsWith(Promise.resolve(42), Teapot)).rejects.toThrow(
      "expected a rejection with Teapot, but the promise fulfilled",
    );
  });
});
