import { describe, expect, it } from "vitest";
import { PRICES_EUR as ENGINE_PRICES } from "../engine/src/plans";
import { computeCostEur, PRICES_EUR } from "./pricing";

describe("pricing", () => {
  it("agrees with the engine's metering prices", () => {
    expect(PRICES_EUR.vcpuHour).toBe(ENGINE_PRICES.vcpuHour);
    expect(PRICES_EUR.gibHour).toBe(ENGINE_PRICES.gibHour);
  });

  it("costs an hour of one vCPU and one GiB", () => {
    expect(computeCostEur(3600, 3600)).toBeCloseTo(0.06, 10);
    expect(computeCostEur(0, 0)).toBe(0);
    expect(computeCostEur(Number.NaN, -5)).toBe(0);
  });
});
