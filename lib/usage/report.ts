// The usage report: what GET /api/usage answers and the /usage page reads (issue 22). One shape for
// the server (lib/server/usage/) and the browser: client-safe, types and pure helpers only.
//
// Money is whole micro-euros (1 EUR = 1,000,000 µ€), summed as integers, never floats: a figure
// becomes EUR only to be shown (microToEur). Quantities are on-CPU seconds and GiB-seconds of
// working set (binary gibibytes, as orkestr meters memory); storage is in GB (decimal gigabytes,
// as orkestr bills it). Days are UTC days, `YYYY-MM-DD`.

/** Micro-euros per euro. */
export const MICRO_PER_EUR = 1_000_000;

/** The rate card, in micro-euros: a setting of the team, labelled as an estimate on every page. */
export interface UsageRates {
  /** µ€ per vCPU-hour of on-CPU time (seed: EUR 0.045 → 45,000). */
  vcpu_hour_micro: number;
  /** µ€ per GiB-hour of working-set memory (seed: EUR 0.015 → 15,000). */
  gib_hour_micro: number;
  /** µ€ per GB-month of stored volumes, snapshots and templates (seed: EUR 0.10 → 100,000). */
  storage_gb_month_micro: number;
  /** GB of storage that cost nothing (seed: 10). */
  free_storage_gb: number;
}

/** The seed's prices (seed 000; lib/pricing.ts has the same in EUR). */
export const SEED_RATES: Readonly<UsageRates> = {
  vcpu_hour_micro: 45_000,
  gib_hour_micro: 15_000,
  storage_gb_month_micro: 100_000,
  free_storage_gb: 10,
};

export interface UsageFigures {
  cpu_seconds: number;
  gib_seconds: number;
  /** Whole micro-euros. */
  cost_micro: number;
}

/** Who made a sandbox: a member (user id), or null for "outside Baton" (no `baton.user` stamp). */
export type CreatorId = string | null;

export interface UsageDay extends UsageFigures {
  date: string;
  /** µ€ by creator: user id, or "" for sandboxes made outside Baton. */
  by_member: Record<string, number>;
  /** µ€ by template id ("" when the upstream did not say). */
  by_template: Record<string, number>;
}

export interface UsageMember extends UsageFigures {
  user_id: CreatorId;
  /** The member's name and email; null for "outside Baton" or a former member (name then says so). */
  name: string | null;
  email: string | null;
  /** Sandboxes of this creator with usage in the range. */
  sandboxes: number;
}

export interface UsageSandbox extends UsageFigures {
  id: string;
  user_id: CreatorId;
  template: string | null;
  /** The upstream status at the last reading (running, paused, terminated…). */
  status: string | null;
  last_read_at: string | null;
}

export interface UsageStorage {
  volumes_gb: number;
  snapshots_gb: number;
  templates_gb: number;
  free_gb: number;
  /** max(0, total − free). */
  billable_gb: number;
  /** What a month of the current storage costs: billable_gb × storage_gb_month_micro. */
  month_cost_micro: number;
}

export interface UsageRunning {
  id: string;
  user_id: CreatorId;
  template: string | null;
  /** What it spent per hour between its last two readings. */
  micro_per_hour: number;
}

export interface UsageMonth {
  /** The calendar month (UTC) of `generated_at`, `YYYY-MM`. */
  month: string;
  /** Metered cost from the 1st (UTC) to the last reading, in the report's scope. */
  so_far_micro: number;
  /** EUR/hour of what runs now, in µ€ per hour, and the sandboxes that make it up. */
  run_rate_micro_per_hour: number;
  running: UsageRunning[];
  /** so_far + run_rate × hours left to the month's end: a straight line, labelled as such. */
  forecast_micro: number;
  /** The month's end, ISO (exclusive: the 1st of next month, 00:00 UTC). */
  ends_at: string;
}

export interface UsageReport {
  currency: "EUR";
  /** First and last UTC day, both included. */
  from: string;
  to: string;
  generated_at: string;
  /** When Baton last read this team's counters, and when it reads them next (the job's schedule). */
  last_reading_at: string | null;
  next_reading_at: string | null;
  rates: UsageRates;
  /** "team": everyone's usage (admins, owners). "self": the caller's own, with the team's total. */
  scope: "team" | "self";
  /** In scope. */
  totals: UsageFigures & { sandboxes: number };
  /** The whole team's, whatever the scope. */
  team_totals: UsageFigures;
  /** Every day of the range, zero-filled. */
  days: UsageDay[];
  /** In scope: everyone (team) or the caller alone (self). */
  members: UsageMember[];
  /** In scope, by cost, most first (at most 500). */
  sandboxes: UsageSandbox[];
  storage: UsageStorage | null;
  month: UsageMonth;
}

/** µ€ → EUR, for display only. */
export function microToEur(micro: number): number {
  return micro / MICRO_PER_EUR;
}

/**
 * The cost of metered usage in whole µ€, rounded once: seconds × (µ€ per hour) / 3600 for each of
 * CPU and memory. Exact for the figures the meters give (seconds with at most millisecond
 * precision): the products stay far below 2^53.
 */
export function costMicro(cpuSeconds: number, gibSeconds: number, rates: UsageRates): number {
  const cpu = Number.isFinite(cpuSeconds) && cpuSeconds > 0 ? cpuSeconds : 0;
  const gib = Number.isFinite(gibSeconds) && gibSeconds > 0 ? gibSeconds : 0;
  return Math.round((cpu * rates.vcpu_hour_micro + gib * rates.gib_hour_micro) / 3600);
}
