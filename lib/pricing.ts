// What a sandbox's metered usage costs on screen ("Cost so far" on its page and in the list): the
// team's rate card (issue 22; a team setting in whole micro-euros, labelled an estimate, the seed's
// prices until an owner changes it), the same card GET /api/usage and /usage cost with
// (lib/usage/report.ts costMicro). The engine bills its trial credit with the seed's prices
// (engine/src/plans.ts), which PRICES_EUR restates so a test keeps the two in step.

import { MICRO_PER_EUR, SEED_RATES, type UsageRates } from "./usage/report";

/** The seed's pay-as-you-go prices in EUR (seed 000, the contract's corrections): the default rate card. */
export const PRICES_EUR = {
  /** EUR per vCPU-hour of on-CPU time. */
  vcpuHour: SEED_RATES.vcpu_hour_micro / MICRO_PER_EUR,
  /** EUR per GiB-hour of working-set memory. */
  gibHour: SEED_RATES.gib_hour_micro / MICRO_PER_EUR,
  /** EUR per GB-month of stored snapshots, templates and volumes (first 10 GB free). */
  storageGbMonth: SEED_RATES.storage_gb_month_micro / MICRO_PER_EUR,
} as const;

/** The part of a rate card that prices a sandbox's CPU and memory. */
export type ComputeRates = Pick<UsageRates, "vcpu_hour_micro" | "gib_hour_micro">;

/**
 * Cost in EUR of `cpuSeconds` on-CPU seconds and `gbSeconds` GiB-seconds of working set at the
 * team's `rates`. Not rounded to the micro-euro (unlike the report's per-day rows), so a fresh
 * sandbox's fraction of a micro-euro still reads as "< €0.000001" rather than "€0.00".
 */
export function computeCostEur(cpuSeconds: number, gbSeconds: number, rates: ComputeRates): number {
  const cpu = Number.isFinite(cpuSeconds) && cpuSeconds > 0 ? cpuSeconds : 0;
  const gb = Number.isFinite(gbSeconds) && gbSeconds > 0 ? gbSeconds : 0;
  return (cpu * rates.vcpu_hour_micro + gb * rates.gib_hour_micro) / 3600 / MICRO_PER_EUR;
}
