// The live part of the /usage page: when to read the report again, and the forecast's working
// in words. The server computes the figures (lib/usage/report.ts's UsageMonth); this only says
// how they were made. Pure and client-safe.

import type { UsageMonth, UsageReport } from "./report";

/** Read the report at least this often while the page is open. */
export const USAGE_POLL_MS = 60_000;
/** …and never more often than this, even when the next reading is due sooner. */
export const USAGE_MIN_POLL_MS = 2_000;

/**
 * How long until the page asks again: just after Baton's next reading of the counters when the
 * report says when that is (so the figures move as soon as they can), else a minute; clamped to
 * [USAGE_MIN_POLL_MS, USAGE_POLL_MS].
 */
export function nextPollMs(report: Pick<UsageReport, "next_reading_at"> | undefined, nowMs: number): number {
  const next = report?.next_reading_at ? Date.parse(report.next_reading_at) : NaN;
  if (!Number.isFinite(next)) return USAGE_POLL_MS;
  return Math.min(USAGE_POLL_MS, Math.max(USAGE_MIN_POLL_MS, next - nowMs + 1_000));
}

/** Hours from the report's time to the month's end (≥ 0), as the forecast counts them. */
export function hoursLeft(month: Pick<UsageMonth, "ends_at">, generatedAt: string): number {
  const ms = Date.parse(month.ends_at) - Date.parse(generatedAt);
  return Number.isFinite(ms) && ms > 0 ? ms / 3_600_000 : 0;
}

/** "3 days 4 hours", "5 hours", "under an hour": the time left in the month, for the forecast's label. */
export function formatHoursLeft(hours: number): string {
  const h = Math.floor(hours);
  if (h < 1) return "under an hour";
  const d = Math.floor(h / 24);
  const rest = h % 24;
  const part = (n: number, unit: string) => `${n} ${unit}${n === 1 ? "" : "s"}`;
  if (!d) return part(h, "hour");
  return rest ? `${part(d, "day")} ${part(rest, "hour")}` : part(d, "day");
}
