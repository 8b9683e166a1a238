// The /usage page's date range: two UTC days, both included, kept in the page URL as
// `?from=YYYY-MM-DD&to=YYYY-MM-DD` (next to `?team=`). This month (the 1st to today, UTC) when the
// URL says nothing. Pure and client-safe.

export interface DayRange {
  /** First UTC day, `YYYY-MM-DD`. */
  from: string;
  /** Last UTC day, included. */
  to: string;
}

/** The longest range the page asks for: a year and a day (a leap year's January to January). */
export const MAX_RANGE_DAYS = 366;

const DAY_MS = 86_400_000;
const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The UTC day of a time, `YYYY-MM-DD`. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** 00:00 UTC of a `YYYY-MM-DD` day, or null when it is not a real calendar day ("2026-02-30"). */
export function parseDay(day: string): number | null {
  const m = DAY_PATTERN.exec(day);
  if (!m) return null;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return utcDay(ms) === day ? ms : null;
}

/** The 1st of the month (UTC) of `nowMs` to that day. */
export function thisMonth(nowMs: number): DayRange {
  const today = utcDay(nowMs);
  return { from: `${today.slice(0, 8)}01`, to: today };
}

/** The whole previous calendar month (UTC). */
export function lastMonth(nowMs: number): DayRange {
  const d = new Date(nowMs);
  const firstOfThis = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const lastOfPrevious = firstOfThis - DAY_MS;
  return { from: `${utcDay(lastOfPrevious).slice(0, 8)}01`, to: utcDay(lastOfPrevious) };
}

/** The last `n` days, today included. */
export function lastDays(n: number, nowMs: number): DayRange {
  return { from: utcDay(nowMs - (n - 1) * DAY_MS), to: utcDay(nowMs) };
}

/** How many days the range covers (both ends included); 0 when it is not a valid range. */
export function rangeDays(range: DayRange): number {
  const from = parseDay(range.from);
  const to = parseDay(range.to);
  return from === null || to === null || to < from ? 0 : (to - from) / DAY_MS + 1;
}

/** What is wrong with a range, in words for the form; null when it is fine. */
export function rangeProblem(range: DayRange, nowMs: number): string | null {
  const from = parseDay(range.from);
  const to = parseDay(range.to);
  if (from === null) return "The start is not a date: use YYYY-MM-DD.";
  if (to === null) return "The end is not a date: use YYYY-MM-DD.";
  if (to < from) return "The end is before the start.";
  if (from > parseDay(utcDay(nowMs))!) return "The range starts in the future: there is no usage there yet.";
  if (rangeDays(range) > MAX_RANGE_DAYS) return `The range is longer than ${MAX_RANGE_DAYS} days: shorten it.`;
  return null;
}

/**
 * The range a page URL asks for: its `from` and `to`, or this month when it names neither. A range
 * the URL gets wrong is replaced by this month, and `problem` says why (the page shows it).
 */
export function rangeFromParams(params: URLSearchParams, nowMs: number): { range: DayRange; problem: string | null } {
  const from = params.get("from");
  const to = params.get("to");
  const fallback = thisMonth(nowMs);
  if (from === null && to === null) return { range: fallback, problem: null };
  const asked = { from: from ?? fallback.from, to: to ?? fallback.to };
  const problem = rangeProblem(asked, nowMs);
  return problem
    ? { range: fallback, problem: `${problem} Showing this month instead.` }
    : { range: asked, problem: null };
}

/** The named ranges the page offers as one click. */
export function rangePresets(nowMs: number): { label: string; range: DayRange }[] {
  return [
    { label: "This month", range: thisMonth(nowMs) },
    { label: "Last month", range: lastMonth(nowMs) },
    { label: "Last 7 days", range: lastDays(7, nowMs) },
    { label: "Last 30 days", range: lastDays(30, nowMs) },
  ];
}

export function sameRange(a: DayRange, b: DayRange): boolean {
  return a.from === b.from && a.to === b.to;
}
