import "server-only";
import { describe, expect, it } from "vitest";
import { cachedSession, forgetRemembered, SESSION_CACHE_TTL_MS } from "./session-cache";

/** A loader that counts its calls and answers `value` (or what `next` says). */
function loader<T>(value: T | null) {
  const calls = { n: 0, value };
  const load = async () => {
    calls.n += 1;
    return calls.value;
  };
  return { calls, load };
}

const never = () => Number.MAX_SAFE_INTEGER;

describe("session cache", () => {
  it("answers from memory within the TTL, and reads again after it", async () => {
    const db = {};
    const t0 = 1_000_000;
    const { calls, load } = loader({ user: "u1" });
    expect(await cachedSession(db, "sid", load, never, t0)).toEqual({ user: "u1" });
    expect(await cachedSession(db, "sid", load, never, t0 + SESSION_CACHE_TTL_MS - 1)).toEqual({ user: "u1" });
    expect(calls.n).toBe(1);
    // Another instance revoked it: the row now says no session. Seen once the TTL is over.
    calls.value = null;
    expect(await cachedSession(db, "sid", load, never, t0 + SESSION_CACHE_TTL_MS)).toBeNull();
    expect(calls.n).toBe(2);
  });

  it("forgetRemembered() makes the next check read the database at once", async () => {
    const db = {};
    const { calls, load } = loader({ user: "u1" });
    await cachedSession(db, "sid", load, never);
    calls.value = null; // revoked in this process…
    forgetRemembered(); // …by a repository function, which then forgets
    expect(await cachedSession(db, "sid", load, never)).toBeNull();
    expect(calls.n).toBe(2);
  });

  it("does not keep a load that was under way when a write happened", async () => {
    const db = {};
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let n = 0;
    const slow = async () => {
      n += 1;
      if (n === 1) await gate; // read the live row, then the revocation lands before it is kept
      return n === 1 ? { user: "u1" } : null;
    };
    const first = cachedSession(db, "sid", slow, never);
    forgetRemembered();
    release();
    expect(await first).toEqual({ user: "u1" }); // answered as read
    expect(await cachedSession(db, "sid", slow, never)).toBeNull(); // but not remembered
    expect(n).toBe(2);
  });

  it("honours the session's own expiry and keeps no misses", async () => {
    const db = {};
    const t0 = 2_000_000;
    const { calls, load } = loader({ user: "u1" });
    await cachedSession(db, "sid", load, () => t0 + 10, t0);
    await cachedSession(db, "sid", load, () => t0 + 10, t0 + 10);
    expect(calls.n).toBe(2);
    const miss = loader(null);
    await cachedSession(db, "gone", miss.load, never, t0);
    await cachedSession(db, "gone", miss.load, never, t0);
    expect(miss.calls.n).toBe(2);
  });

  it("keeps sessions apart per database", async () => {
    const a = loader({ user: "a" });
    const b = loader({ user: "b" });
    expect(await cachedSession({}, "sid", a.load, never)).toEqual({ user: "a" });
    expect(await cachedSession({}, "sid", b.load, never)).toEqual({ user: "b" });
  });
});
