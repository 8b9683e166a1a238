"use client";

// recharts lives only here, and this module is loaded with next/dynamic from live-metrics.tsx: the
// charts' weight lands on the detail page alone, never on /sandboxes (180 kB first-load budget).

import { Area, AreaChart, CartesianGrid, ReferenceArea, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { YAxisProps } from "recharts";
import { formatBytes, formatClock, formatPercent } from "../../../lib/format";
import { timeTicks, type MetricPoint, type StatusPeriod } from "./metrics-history";

const AXIS = { fontSize: 11, fill: "var(--muted-foreground)" };

interface ChartProps {
  points: MetricPoint[];
  periods: StatusPeriod[];
  now: number;
  windowMs: number;
}

function PeriodAreas({
  periods,
  now,
  from,
  yAxisId = 0,
}: {
  periods: StatusPeriod[];
  now: number;
  from: number;
  yAxisId?: string | number;
}) {
  return (
    <>
      {periods.map((p) => (
        <ReferenceArea
          key={`${p.status}-${p.from}`}
          x1={Math.max(p.from, from)}
          x2={p.to ?? now}
          yAxisId={yAxisId}
          ifOverflow="hidden"
          fill="var(--muted-foreground)"
          fillOpacity={0.12}
          stroke="none"
          label={{ value: p.status, position: "insideTop", fontSize: 11, fill: "var(--muted-foreground)" }}
        />
      ))}
    </>
  );
}

function domain(points: MetricPoint[], now: number, windowMs: number): [number, number] {
  // Grow with the data up to the window, so the first minutes are not squeezed to the right edge.
  const first = points[0]?.t ?? now - 60_000;
  return [Math.max(now - windowMs, Math.min(first, now - 60_000)), now];
}

function TooltipBox({
  active,
  payload,
  label,
  render,
}: {
  active?: boolean;
  payload?: readonly { payload?: MetricPoint }[];
  label?: number | string;
  render: (p: MetricPoint) => string;
}) {
  const point = payload?.[0]?.payload;
  if (!active || !point) return null;
  return (
    <div className="rounded-md border bg-popover px-2 py-1 text-xs text-popover-foreground shadow-sm">
      <div className="text-muted-foreground">{formatClock(Number(label))}</div>
      <div className="font-medium">
        {point.cpu === null && point.mem === null ? "no samples (not running)" : render(point)}
      </div>
    </div>
  );
}

interface Series {
  dataKey: "cpu" | "mem";
  name: string;
  color: string;
  /** Room on the right edge: the memory chart's right axis brings its own. */
  marginRight: number;
  /** The axis the series and the status periods are drawn against. */
  yAxisId: string | number;
  yAxes: (points: MetricPoint[], limitBytes: number | null) => YAxisProps[];
  tooltip: (p: MetricPoint) => string;
}

const PERCENT_AXIS = {
  domain: [0, 100],
  ticks: [0, 25, 50, 75, 100],
  tickFormatter: (v: number) => `${v}%`,
} satisfies YAxisProps;

/** The two charts differ only in the series they draw and the axes they read it on. */
const SERIES = {
  cpu: {
    dataKey: "cpu",
    name: "CPU",
    color: "var(--primary)",
    marginRight: 8,
    yAxisId: 0,
    yAxes: () => [{ ...PERCENT_AXIS, width: 44 }],
    tooltip: (pt) => `CPU ${formatPercent(pt.cpu)}`,
  },
  memory: {
    dataKey: "mem",
    name: "Memory",
    color: "var(--success)",
    marginRight: 0,
    yAxisId: "bytes",
    // Bytes on the left, % of the limit on the right: the same scale, so one series reads on both.
    yAxes: (points, limitBytes) => {
      const max = limitBytes ?? Math.max(1, ...points.map((p) => p.mem ?? 0));
      return [
        {
          yAxisId: "bytes",
          domain: [0, max],
          ticks: [0, max / 4, max / 2, (3 * max) / 4, max],
          tickFormatter: (v: number) => formatBytes(v),
          width: 76,
        },
        { ...PERCENT_AXIS, yAxisId: "pct", orientation: "right", width: 40, hide: !limitBytes },
      ];
    },
    tooltip: (pt) => `${formatBytes(pt.mem)}${pt.memPct !== null ? ` (${formatPercent(pt.memPct)} of the limit)` : ""}`,
  },
} satisfies Record<string, Series>;

export type MetricSeries = keyof typeof SERIES;

export function MetricChart({
  series,
  points,
  periods,
  now,
  windowMs,
  limitBytes = null,
}: ChartProps & { series: MetricSeries; limitBytes?: number | null }) {
  const s: Series = SERIES[series];
  const [from, to] = domain(points, now, windowMs);
  return (
    <ResponsiveContainer width="100%" height={180}>
      <AreaChart data={points} margin={{ top: 16, right: s.marginRight, bottom: 0, left: 0 }}>
        <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" vertical={false} />
        <XAxis
          dataKey="t"
          type="number"
          scale="time"
          domain={[from, to]}
          allowDataOverflow
          ticks={timeTicks(from, to)}
          // Every given tick is drawn: recharts measures no label text to thin them out.
          interval={0}
          tickFormatter={formatClock}
          tick={AXIS}
          stroke="var(--border)"
        />
        {s.yAxes(points, limitBytes).map((axis) => (
          <YAxis key={String(axis.yAxisId ?? 0)} tick={AXIS} stroke="var(--border)" interval={0} {...axis} />
        ))}
        <PeriodAreas periods={periods} now={now} from={from} yAxisId={s.yAxisId} />
        <Tooltip content={(p) => <TooltipBox {...p} render={s.tooltip} />} />
        <Area
          yAxisId={s.yAxisId}
          type="linear"
          dataKey={s.dataKey}
          name={s.name}
          connectNulls={false}
          isAnimationActive={false}
          stroke={s.color}
          strokeWidth={1.5}
          fill={s.color}
          fillOpacity={0.15}
        />
      </AreaChart>
    </ResponsiveContainer>
  );
}
