// The stacked "cost per day" of the /usage page: which series (members or templates) the chart
// stacks, their names, and one row per day with each series' micro-euros. The chart, its table
// view and the table's CSV are all drawn from these rows, so they cannot disagree. Pure and
// client-safe.

import type { CreatorId, UsageDay, UsageMember } from "./report";

export type Grouping = "member" | "template";

/** At most this many series get their own colour; the rest are summed as "Others". */
export const MAX_SERIES = 6;
export const OTHERS_KEY = "\u0000others";

export interface SeriesKey {
  /** The key in UsageDay.by_member / by_template ("" for outside Baton / unknown template), or OTHERS_KEY. */
  key: string;
  label: string;
  /** The series' cost over the whole range, µ€. */
  total_micro: number;
}

export interface DayRow {
  date: string;
  /** µ€ per series key, every key of the series present (0 when none). */
  values: Record<string, number>;
  /** The day's cost, µ€ (UsageDay.cost_micro). */
  total_micro: number;
}

/** How a creator reads on the page: name, else email, else a former member; null is "outside Baton". */
export function memberLabel(id: CreatorId, members: readonly UsageMember[]): string {
  if (id === null || id === "") return "outside Baton";
  const m = members.find((x) => x.user_id === id);
  return m?.name || m?.email || `former member (${id.slice(0, 8)})`;
}

export function templateLabel(id: string | null): string {
  return id ? id : "unknown template";
}

function byGroup(day: UsageDay, grouping: Grouping): Record<string, number> {
  return grouping === "member" ? day.by_member : day.by_template;
}

/**
 * The series to stack, most costly first: the first MAX_SERIES keys as themselves and, when there
 * are more, one "Others" holding the rest. Series that cost nothing over the range are left out.
 */
export function seriesKeys(
  days: readonly UsageDay[],
  grouping: Grouping,
  members: readonly UsageMember[],
): SeriesKey[] {
  const totals = new Map<string, number>();
  for (const day of days)
    for (const [key, micro] of Object.entries(byGroup(day, grouping))) totals.set(key, (totals.get(key) ?? 0) + micro);
  const label = (key: string) => (grouping === "member" ? memberLabel(key, members) : templateLabel(key));
  const sorted = [...totals.entries()]
    .filter(([, micro]) => micro > 0)
    .map(([key, total_micro]) => ({ key, label: label(key), total_micro }))
    .sort((a, b) => b.total_micro - a.total_micro || a.label.localeCompare(b.label));
  if (sorted.length <= MAX_SERIES) return sorted;
  const kept = sorted.slice(0, MAX_SERIES - 1);
  const rest = sorted.slice(MAX_SERIES - 1);
  return [
    ...kept,
    { key: OTHERS_KEY, label: `Others (${rest.length})`, total_micro: rest.reduce((s, k) => s + k.total_micro, 0) },
  ];
}

/** One row per day of the report (it is zero-filled), each series' µ€ that day. */
export function dayRows(days: readonly UsageDay[], grouping: Grouping, keys: readonly SeriesKey[]): DayRow[] {
  const own = new Set(keys.map((k) => k.key).filter((k) => k !== OTHERS_KEY));
  const hasOthers = keys.some((k) => k.key === OTHERS_KEY);
  return days.map((day) => {
    const values: Record<string, number> = {};
    for (const k of keys) values[k.key] = 0;
    for (const [key, micro] of Object.entries(byGroup(day, grouping))) {
      if (own.has(key)) values[key] = (values[key] ?? 0) + micro;
      else if (hasOthers) values[OTHERS_KEY] = (values[OTHERS_KEY] ?? 0) + micro;
    }
    return { date: day.date, values, total_micro: day.cost_micro };
  });
}
