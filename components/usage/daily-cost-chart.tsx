"use client";

// recharts lives only here, loaded with next/dynamic from usage-view.tsx (ssr: false): its weight
// stays off /usage's first load (200 KiB budget) and off every other page.

import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatMicro } from "../../lib/format";
import type { DayRow, SeriesKey } from "../../lib/usage/series";
import { SERIES_COLOURS } from "./series-colours";

const AXIS = { fontSize: 11, fill: "var(--muted-foreground)" };

function TooltipBox({
  active,
  payload,
  label,
  keys,
}: {
  active?: boolean;
  payload?: readonly { payload?: { row: DayRow } }[];
  label?: string | number;
  keys: readonly SeriesKey[];
}) {
  const row = payload?.[0]?.payload?.row;
  if (!active || !row) return null;
  return (
    <div className="rounded-md border bg-popover px-3 py-2 text-xs text-popover-foreground shadow-sm">
      <div className="mb-1 font-medium">{label} (UTC)</div>
      <ul className="flex flex-col gap-0.5">
        {keys.map((k, i) => (
          <li key={k.key} className="flex items-center justify-between gap-4">
            <span className="flex items-center gap-1.5">
              <span aria-hidden="true" className="size-2 rounded-sm" style={{ background: SERIES_COLOURS[i] }} />
              {k.label}
            </span>
            <span className="tabular-nums">{formatMicro(row.values[k.key] ?? 0)}</span>
          </li>
        ))}
        <li className="mt-1 flex justify-between gap-4 border-t pt-1 font-medium">
          <span>Total</span>
          <span className="tabular-nums">{formatMicro(row.total_micro)}</span>
        </li>
      </ul>
    </div>
  );
}

export default function DailyCostChart({
  rows,
  keys,
  title,
}: {
  rows: readonly DayRow[];
  keys: readonly SeriesKey[];
  /** The chart's accessible name (its <title>): what it shows, in words. */
  title: string;
}) {
  const data = rows.map((row) => ({ date: row.date, row, ...row.values }));
  return (
    <ResponsiveContainer width="100%" height={260}>
      <BarChart data={data} title={title} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
        <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" vertical={false} />
        <XAxis
          dataKey="date"
          tick={AXIS}
          stroke="var(--border)"
          tickFormatter={(d: string) => d.slice(5)}
          minTickGap={12}
        />
        <YAxis tick={AXIS} stroke="var(--border)" width={64} tickFormatter={(v: number) => formatMicro(v)} />
        <Tooltip cursor={{ fill: "var(--muted)", opacity: 0.5 }} content={(p) => <TooltipBox {...p} keys={keys} />} />
        {keys.map((k, i) => (
          <Bar
            key={k.key}
            dataKey={(d: { row: DayRow }) => d.row.values[k.key] ?? 0}
            name={k.label}
            stackId="cost"
            fill={SERIES_COLOURS[i]}
            isAnimationActive={false}
          />
        ))}
      </BarChart>
    </ResponsiveContainer>
  );
}
