import { describe, expect, it } from "vitest";
import {
  alertThresholdCrossed,
  alertsDue,
  capPercent,
  capReached,
  capReachedDetail,
  memberCapProblem,
  possibleOvershootMicro,
  windowBounds,
  windowKey,
} from "./caps";

const at = Date.parse("2026-12-31T23:59:59.999Z");

describe("spend cap rules", () => {
  it("keys and bounds windows in UTC", () => {
    expect(windowKey("month", at)).toBe("2026-12");
    expect(windowKey("day", at)).toBe("2026-12-31");
    expect(windowKey("month", at + 1)).toBe("2027-01");
    expect(windowBounds("month", at)).toEqual({
      start: Date.parse("2026-12-01T00:00:00Z"),
      end: Date.parse("2027-01-01T00:00:00Z"),
    });
    expect(windowBounds("day", at)).toEqual({
      start: Date.parse("2026-12-31T00:00:00Z"),
      end: Date.parse("2027-01-01T00:00:00Z"),
    });
  });

  it("alerts each threshold once per window, several at once when a cap is set below what is spent", () => {
    const cap = { limitMicro: 1_000_000 };
    expect(alertsDue(cap, 499_999, new Set())).toEqual([]);
    expect(alertsDue(cap, 500_000, new Set())).toEqual([50]);
    expect(alertsDue(cap, 850_000, new Set([50]))).toEqual([80]);
    expect(alertsDue(cap, 850_000, new Set([50, 80]))).toEqual([]);
    expect(alertsDue(cap, 2_000_000, new Set())).toEqual([50, 80, 100]);
    expect(alertsDue({ limitMicro: 0 }, 1, new Set())).toEqual([50, 80, 100]);
  });

  it("names the highest alert threshold crossed, for the console's warning and its dismissal", () => {
    expect(alertThresholdCrossed(0)).toBeNull();
    expect(alertThresholdCrossed(49.99)).toBeNull();
    expect(alertThresholdCrossed(50)).toBe(50);
    expect(alertThresholdCrossed(79.9)).toBe(50);
    expect(alertThresholdCrossed(80)).toBe(80);
    expect(alertThresholdCrossed(99.99)).toBe(80);
    expect(alertThresholdCrossed(100)).toBe(100);
    // A cap of 0 with anything spent (capPercent's Infinity), and no figure at all.
    expect(alertThresholdCrossed(capPercent(1, 0))).toBe(100);
    expect(alertThresholdCrossed(Number.NaN)).toBeNull();
  });

  it("is reached at the limit, and a zero cap by anything", () => {
    expect(capReached({ limitMicro: 10 }, 9)).toBe(false);
    expect(capReached({ limitMicro: 10 }, 10)).toBe(true);
    expect(capReached({ limitMicro: 0 }, 0)).toBe(true);
    expect(capPercent(250, 1000)).toBe(25);
  });

  it("estimates the overshoot before the next run from the run-rate, rounding up", () => {
    expect(possibleOvershootMicro(3_600_000, 60_000)).toBe(60_000);
    expect(possibleOvershootMicro(1, 1)).toBe(1);
    expect(possibleOvershootMicro(0, 60_000)).toBe(0);
    expect(possibleOvershootMicro(Number.NaN, 60_000)).toBe(0);
  });

  it("refuses a member cap above the team's for the same window", () => {
    const team = [{ window: "month" as const, limitMicro: 10_000_000 }];
    expect(memberCapProblem({ window: "month", limitMicro: 10_000_000 }, team)).toBeNull();
    expect(memberCapProblem({ window: "day", limitMicro: 20_000_000 }, team)).toBeNull();
    expect(memberCapProblem({ window: "month", limitMicro: 10_000_001 }, team)).toBe(
      "A member's monthly cap (€10.00) cannot be higher than the team's (€10.00).",
    );
  });

  it("says which cap, how much, what was refused and who can raise it", () => {
    const detail = capReachedDetail({
      cap: { userId: null, window: "month", limitMicro: 5_000_000, action: "block" },
      spentMicro: 5_120_000,
      teamName: "Analytical Engines",
      raisers: "the team's owners",
      refused: "create a sandbox",
    });
    expect(detail).toBe(
      "Analytical Engines's monthly spend cap of €5.00 is reached (€5.12 spent this month, UTC), so Baton does not " +
        "create a sandbox. Running sandboxes keep running. The team's owners can raise the cap on the Usage page.",
    );
    expect(
      capReachedDetail({
        cap: { userId: "usr_1", window: "day", limitMicro: 100_000, action: "pause" },
        spentMicro: 100_000,
        teamName: "T",
        raisers: "the team's owners and admins",
        refused: "resume this sandbox",
      }),
    ).toMatch(
      /^Your daily spend cap of €0\.10 is reached .*paused and resume once the cap is raised\. The team's owners and admins/,
    );
  });
});
