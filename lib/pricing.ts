// orkestr's pay-as-you-go prices (seed 000, the contract's corrections): metered per second on actual on-CPU time
// and working-set RAM. The console shows costs with these; the engine bills its trial credit with
// the same numbers (engine/src/plans.ts), so the two agree. Amounts read on screen through
// formatEur() in lib/format.ts.

export const PRICES_EUR = {
  /** EUR per vCPU-hour of on-CPU time. */
  vcpuHour: 0.045,
  /** EUR per GiB-hour of working-set memory. */
  gibHour: 0.015,
  /** EUR per GB-month of stored snapshots, templates and volumes (first 10 GB free). */
  storageGbMonth: 0.1,
} as const;

/** Cost in EUR of `cpuSeconds` on-CPU seconds and `gbSeconds` GiB-seconds of working set. */
export function computeCostEur(cpuSeconds: number, gbSeconds: number): number {
  const cpu = Number.isFinite(cpuSeconds) && cpuSeconds > 0 ? cpuSeconds : 0;
  const gb = Number.isFinite(gbSeconds) && gbSeconds > 0 ? gbSeconds : 0;
  return (cpu / 3600) * PRICES_EUR.vcpuHour + (gb / 3600) * PRICES_EUR.gibHour;
}
