import { describe, expect, it } from "vitest";
import { parseTokenCap, parseTokenConcurrency, tokenLimitsText } from "./limits-form";

describe("a token's limits as typed in the form", () => {
  it("reads the cap as whole cents of EUR, from the text (no float), empty meaning none", () => {
    expect(parseTokenCap("")).toEqual({ ok: true, value: null });
    expect(parseTokenCap("5")).toEqual({ ok: true, value: 5_000_000 });
    expect(parseTokenCap("12.50")).toEqual({ ok: true, value: 12_500_000 });
    expect(parseTokenCap("0,01")).toEqual({ ok: true, value: 10_000 });
    expect(parseTokenCap("0.29")).toEqual({ ok: true, value: 290_000 }); // 0.29 * 1e6 is 289999.99… as a float
    expect(parseTokenCap("1.005")).toMatchObject({ ok: false, error: expect.stringContaining("whole cents") });
    expect(parseTokenCap("0")).toMatchObject({ ok: false, error: expect.stringContaining("€0.01") });
    expect(parseTokenCap("-3")).toMatchObject({ ok: false });
    expect(parseTokenCap("ten")).toMatchObject({ ok: false, error: expect.stringContaining("EUR") });
    expect(parseTokenCap("1000001")).toMatchObject({ ok: false });
  });

  it("reads concurrency as a whole number from 1 to 100", () => {
    expect(parseTokenConcurrency(" ")).toEqual({ ok: true, value: null });
    expect(parseTokenConcurrency("1")).toEqual({ ok: true, value: 1 });
    expect(parseTokenConcurrency("100")).toEqual({ ok: true, value: 100 });
    for (const bad of ["0", "101", "2.5", "-1", "x"]) expect(parseTokenConcurrency(bad)).toMatchObject({ ok: false });
  });

  it("says the limits in the list's words", () => {
    expect(tokenLimitsText({ spend_cap_micro: null, max_concurrent_sandboxes: null })).toEqual([]);
    expect(tokenLimitsText({ spend_cap_micro: 5_000_000, max_concurrent_sandboxes: 1 })).toEqual([
      "€5.00 a month (UTC)",
      "1 sandbox at once",
    ]);
    expect(tokenLimitsText({ spend_cap_micro: null, max_concurrent_sandboxes: 3 })).toEqual(["3 sandboxes at once"]);
  });
});
