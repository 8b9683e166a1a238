// The rate card's form: prices typed in EUR, sent as whole micro-euros, converted from the text
// itself (never through a float). Pure and client-safe.

import type { UsageRates } from "./report";
import { eurValue } from "./tables";

/** The server's bounds (PATCH /api/usage/rates): µ€ per hour, µ€ per GB-month, whole GB. */
const MAX = { hour: 100_000_000, month: 1_000_000_000, free: 1_000_000 };

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
  const free = /^\s*\d{1,7}\s*$/.test(d.free) && Number(d.free) <= MAX.free ? Number(d.free) : null;
  const money = (max: number) =>
    `An amount in EUR, 0 or more, at most six decimals (0.045), at most ${microToEurText(max)}.`;
  if (vcpu === null || vcpu > MAX.hour) errors.vcpu = money(MAX.hour);
  if (gib === null || gib > MAX.hour) errors.gib = money(MAX.hour);
  if (storage === null || storage > MAX.month) errors.storage = money(MAX.month);
  if (free === null) errors.free = `A whole number of GB, 0 to ${MAX.free}.`;
  if (vcpu === null || gib === null || storage === null || free === null || Object.keys(errors).length)
    return { ok: false, errors };
  return {
    ok: true,
    rates: { vcpu_hour_micro: vcpu, gib_hour_micro: gib, storage_gb_month_micro: storage, free_storage_gb: free },
  };
}

/** The estimate's sentence: "EUR 0.045 per vCPU-hour, EUR 0.015 per GiB-hour, …". */
export function ratesSentence(r: UsageRates): string {
  return `EUR ${microToEurText(r.vcpu_hour_micro)} per vCPU-hour of CPU time, EUR ${microToEurText(r.gib_hour_micro)} per GiB-hour of memory, EUR ${microToEurText(r.storage_gb_month_micro)} per GB-month of storage beyond ${r.free_storage_gb} GB free`;
}
