import "server-only";
import { describe, expect, it } from "vitest";
import { newId, ulid } from "./ids";

// The random part comes from a pooled buffer (ids.ts): these hold across its refills.

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const randomPart = (id: string) => [...id.slice(10)].reduce((v, ch) => v * 32n + BigInt(CROCKFORD.indexOf(ch)), 0n);

describe("ulid", () => {
  it("is 26 Crockford characters, and newId puts its prefix in front", () => {
    expect(ulid()).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(newId("req")).toMatch(/^req_[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  it("gives each new millisecond fresh random bytes, never reused across pool refills", () => {
    // One id per millisecond takes 10 pool bytes each: 5000 of them go through the 4 KiB pool ~12 times.
    const base = Date.now() + 10_000_000;
    const ids = Array.from({ length: 5000 }, (_, i) => ulid(base + i));
    expect(new Set(ids.map(randomPart)).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    // Not all zero, not a constant: the bytes are the CSPRNG's.
    const hexes = new Set(ids.map((id) => id.slice(10, 14)));
    expect(hexes.size).toBeGreaterThan(1000);
  });

  it("steps by one within a millisecond (or a clock stepped back), across pool refills too", () => {
    const base = Date.now() + 20_000_000;
    let previous = ulid(base);
    // 1000 new milliseconds (~2.5 pool refills), each followed by a same-millisecond id and one
    // with an earlier clock: both keep the last time and add one to the random part.
    for (let i = 1; i <= 1000; i++) {
      const fresh = ulid(base + i * 2);
      const same = ulid(base + i * 2);
      const back = ulid(base + i * 2 - 1);
      expect(fresh > previous).toBe(true);
      expect(same.slice(0, 10)).toBe(fresh.slice(0, 10));
      expect(back.slice(0, 10)).toBe(fresh.slice(0, 10));
      expect(randomPart(same) - randomPart(fresh)).toBe(1n);
      expect(randomPart(back) - randomPart(same)).toBe(1n);
      previous = back;
    }
  });

  it("orders ids made in a tight loop in creation order", () => {
    const ids = Array.from({ length: 5000 }, () => newId("x"));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
