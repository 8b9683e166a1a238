import { describe, expect, it } from "vitest";
import { newId, ulid } from "../src/lib/ids.js";

describe("ulid", () => {
  it("is monotonic within the process: ids made in one millisecond sort in creation order", () => {
    // Thousands of ids in a tight loop share milliseconds; a plain ULID orders those by chance,
    // and the lists' newest-first paging would then show same-millisecond rows out of order.
    const ids = Array.from({ length: 5000 }, () => newId("wh"));
    expect(new Set(ids.map((id) => id.slice(3, 13))).size).toBeLessThan(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it("keeps an explicit time (rows seeded in the past) and is 26 Crockford characters", () => {
    const past = Date.UTC(2026, 0, 1);
    const id = ulid(past);
    expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(id.slice(0, 10)).toBe(ulid(past).slice(0, 10));
    expect(id < ulid()).toBe(true);
  });
});

describe("ulid's same-millisecond step", () => {
  it("is random and large: the next id (maybe another account's sandbox) is not computable from one's own", () => {
    const ids = Array.from({ length: 2000 }, () => ulid());
    const decode = (id: string) =>
      [...id.slice(10)].reduce((v, ch) => v * 32n + BigInt("0123456789ABCDEFGHJKMNPQRSTVWXYZ".indexOf(ch)), 0n);
    const steps = ids
      .slice(1)
      .map((id, i) => (id.slice(0, 10) === ids[i]!.slice(0, 10) ? decode(id) - decode(ids[i]!) : null))
      .filter((d): d is bigint => d !== null);
    expect(steps.length).toBeGreaterThan(100);
    // A step of 1 (the spec's monotonic mode) or any small step would let one guess the next id.
    expect(steps.every((d) => d > 1n << 32n)).toBe(true);
    expect(new Set(steps).size).toBe(steps.length);
  });
});
