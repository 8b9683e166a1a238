// The rate card's form: prices typed in EUR, sent as whole micro-euros, converted from the text
// itself (never through a float). Pure and client-safe.

import type { UsageRates } from "./report";
import { eurValue } from "./tables";

/** "0.045" → 45_000; null when it is not a non-negative amount with at most six decimals. */
export function parseEurToMicro(text: string): number | null {
  const m = /^\s*(\d{1,7})(?:[.,](\d{1,6}))?\s*$/.exec(text);
  if (!m) return null;
  return Number(m[1]) * 1_000_000 + Number((m[2] ?? "").padEnd(6, "0"));
}

/** µ€ → the shortest exact EUR text: 45_000 → "0.045", 100_000 → "0.1", 2_000_000 → "2". */
export function microToEurText(micro: number): string {
  return eurValue(micro).replace(/\.?0+$/, "");
}

export interface RatesDraft {
  vcpu: string;
  gib: string;
  storage: string;
  free: string;
}

export function ratesDraft(r: UsageRates): RatesDraft {
  return {
    vcpu: microToEurText(r.vcpu_hour_micro),
    gib: microToEurText(r.gib_hour_micro),
    storage: microToEurText(r.storage_gb_month_micro),
    free: String(r.free_storage_gb),
  };
}

/** The change to send, or the problems per field (in words) when a field does not read. */
export function readRatesDraft(
  d: RatesDraft,
): { ok: true; rates: UsageRates } | { ok: false; errors: Partial<Record<keyof RatesDraft, string>> } {
  const errors: Partial<Record<keyof RatesDraft, string>> = {};
  const vcpu = parseEurToMicro(d.vcpu);
  const gib = parseEurToMicro(d.gib);
  const storage = parseEurToMicro(d.storage);
  const free = /^\s*\d{1,6}(\.\d{1,3})?\s*$/.test(d.free) ? Number(d.free) : null;
  const money = "An amount in EUR, 0 or more, at most six decimals (0.045).";
  if (vcpu === null) errors.vcpu = money;
  if (gib === null) errors.gib = money;
  if (storage === null) errors.storage = money;
  if (free === null) errors.free = "A number of GB, 0 or more.";
  if (vcpu === null || gib === null || storage === null || free === null) return { ok: false, errors };
  return {
    ok: true,
    rates: { vcpu_hour_micro: vcpu, gib_hour_micro: gib, storage_gb_month_micro: storage, free_storage_gb: free },
  };
}

/** The estimate's sentence: "EUR 0.045 per vCPU-hour, EUR 0.015 per GiB-hour, …". */
export function ratesSentence(r: UsageRates): string {
  return `EUR ${microToEurText(r.vcpu_hour_micro)} per vCPU-hour of CPU time, EUR ${microToEurText(r.gib_hour_micro)} per GiB-hour of memory, EUR ${microToEurText(r.storage_gb_month_micro)} per GB-month of storage beyond ${r.free_storage_gb} GB free`;
}
