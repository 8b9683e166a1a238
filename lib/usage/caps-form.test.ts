import { describe, expect, it } from "vitest";
import {
  barWidth,
  capAmountText,
  capDraft,
  capStatus,
  capSubject,
  parseCapAmount,
  readCapDraft,
  sortCaps,
} from "./caps-form";

describe("the spend caps form and list", () => {
  it("reads EUR amounts in whole cents as micro-euros, without floats", () => {
    expect(parseCapAmount("12.5")).toEqual({ ok: true, micro: 12_500_000 });
    expect(parseCapAmount(" 12,05 ")).toEqual({ ok: true, micro: 12_050_000 });
    expect(parseCapAmount("€0.01")).toEqual({ ok: true, micro: 10_000 });
    expect(parseCapAmount("0")).toEqual({ ok: true, micro: 0 });
    expect(parseCapAmount("0.29")).toEqual({ ok: true, micro: 290_000 }); // 0.29 * 1e6 is 289999.99… as a float
    expect(parseCapAmount("1000000")).toEqual({ ok: true, micro: 1_000_000_000_000 });
    for (const bad of ["", "abc", "-1", "1.005", "1000000.01", "1e3", "12.5.1"])
      expect(parseCapAmount(bad).ok, bad).toBe(false);
    for (const micro of [0, 10_000, 12_500_000, 1_000_000_000_000]) {
      const back = parseCapAmount(capAmountText(micro));
      expect(back).toEqual({ ok: true, micro });
    }
    expect(capAmountText(12_500_000)).toBe("12.50");
  });

  it("says where a cap stands in words: not read, under, alerted at 50 or 80 %, reached", () => {
    expect(capStatus({ spent_micro: null, percent: null, reached: false }).label).toBe("Not read yet");
    expect(capStatus({ spent_micro: 1, percent: 49.9, reached: false }).kind).toBe("under");
    expect(capStatus({ spent_micro: 1, percent: 50, reached: false }).label).toBe("Alerted at 50 %");
    expect(capStatus({ spent_micro: 1, percent: 99, reached: false }).label).toBe("Alerted at 80 %");
    expect(capStatus({ spent_micro: 1, percent: 100, reached: true }).label).toBe("Reached");
    expect(barWidth(null)).toBe(0);
    expect(barWidth(42)).toBe(42);
    expect(barWidth(Infinity)).toBe(100);
  });

  it("names and orders the caps: the team's first, then members by name", () => {
    const caps = [
      { user_id: "u2", user: { name: "Zoe", email: "z@x" }, window: "month" as const },
      { user_id: "u1", user: { name: null, email: "anna@x" }, window: "day" as const },
      { user_id: null, user: null, window: "day" as const },
      { user_id: null, user: null, window: "month" as const },
    ];
    expect(sortCaps(caps).map((c) => `${capSubject(c)}/${c.window}`)).toEqual([
      "The team/month",
      "The team/day",
      "anna@x/day",
      "Zoe/month",
    ]);
  });

  it("turns the form into PUT's body, and a cap back into the form", () => {
    const cap = { user_id: "u1", window: "day" as const, limit_micro: 5_000_000, action: "pause" as const };
    expect(readCapDraft(capDraft(cap))).toEqual({ ok: true, body: { ...cap } });
    expect(readCapDraft({ ...capDraft(), amount: "20" })).toEqual({
      ok: true,
      body: { user_id: null, window: "month", limit_micro: 20_000_000, action: "alert" },
    });
    expect(readCapDraft({ ...capDraft(), amount: "twenty" }).ok).toBe(false);
  });
});
