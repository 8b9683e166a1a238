import { describe, expect, it } from "vitest";
import { PRICES_EUR as ENGINE_PRICES } from "../engine/src/plans";
import { computeCostEur, PRICES_EUR } from "./pricing";
import { costMicro, SEED_RATES, type UsageRates } from "./usage/report";

describe("pricing", () => {
  it("the seed's rate card agrees with the engine's metering prices", () => {
    expect(PRICES_EUR.vcpuHour).toBe(ENGINE_PRICES.vcpuHour);
    expect(PRICES_EUR.gibHour).toBe(ENGINE_PRICES.gibHour);
  });

  it("costs an hour of one vCPU and one GiB at the seed's card", () => {
    expect(computeCostEur(3600, 3600, SEED_RATES)).toBeCloseTo(0.06, 10);
    expect(computeCostEur(0, 0, SEED_RATES)).toBe(0);
    expect(computeCostEur(Number.NaN, -5, SEED_RATES)).toBe(0);
  });

  // "Cost so far" on a sandbox's page and in the list once used the seed's prices whatever the team's
  // card said, so a raised card moved /usage but not the sandbox.
  it("prices with the team's rate card, not the seed's", () => {
    const raised: UsageRates = { ...SEED_RATES, vcpu_hour_micro: 3_600_000, gib_hour_micro: 360_000 };
    // 10 CPU-seconds at EUR 3.60/h (1,000 µ€ a second) and 100 GiB-seconds at EUR 0.36/h.
    expect(computeCostEur(10, 100, raised)).toBeCloseTo(0.02, 12);
    expect(computeCostEur(10, 100, raised)).not.toBeCloseTo(computeCostEur(10, 100, SEED_RATES), 6);
    expect(computeCostEur(10, 100, { vcpu_hour_micro: 0, gib_hour_micro: 0 })).toBe(0);
  });

  it("says what /usage says for the same figures and card (GET /api/usage's costMicro, to the micro-euro)", () => {
    const cards: UsageRates[] = [
      SEED_RATES,
      { ...SEED_RATES, vcpu_hour_micro: 3_600_000, gib_hour_micro: 1 },
      { ...SEED_RATES, vcpu_hour_micro: 12_345, gib_hour_micro: 67_890 },
    ];
    for (const rates of cards)
      for (const [cpu, gib] of [
        [0, 0],
        [1, 1],
        [72, 512.5],
        [3600.25, 7200.125],
        [86_400, 4 * 86_400],
      ] as const)
        expect(Math.round(computeCostEur(cpu, gib, rates) * 1_000_000), `${cpu} s, ${gib} GiB·s`).toBe(
          costMicro(cpu, gib, rates),
        );
  });
});
