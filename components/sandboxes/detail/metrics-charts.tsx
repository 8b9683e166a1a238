"use client";

// recharts lives only here, and this module is loaded with next/dynamic from live-metrics.tsx: the
// charts' weight lands on the detail page alone, never on /sandboxes (180 kB first-load budget).

import { Area, AreaChart, CartesianGrid, ReferenceArea, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatBytes, formatClock, formatPercent } from "../../../lib/format";
import type { MetricPoint, StatusPeriod } from "./metrics-history";

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

export function CpuChart({ points, periods, now, windowMs }: ChartProps) {
  const [from, to] = domain(points, now, windowMs);
  return (
    <ResponsiveContainer width="100%" height={180}>
      <AreaChart data={points} margin={{ top: 16, right: 8, bottom: 0, left: 0 }}>
        <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" vertical={false} />
        <XAxis
          dataKey="t"
          type="number"
          scale="time"
          domain={[from, to]}
          allowDataOverflow
          tickFormatter={formatClock}
          tick={AXIS}
          stroke="var(--border)"
          minTickGap={48}
        />
        <YAxis
          domain={[0, 100]}
          ticks={[0, 25, 50, 75, 100]}
          tickFormatter={(v: number) => `${v}%`}
          tick={AXIS}
          stroke="var(--border)"
          width={44}
        />
        <PeriodAreas periods={periods} now={now} from={from} />
        <Tooltip content={(p) => <TooltipBox {...p} render={(pt) => `CPU ${formatPercent(pt.cpu)}`} />} />
        <Area
          type="linear"
          dataKey="cpu"
          name="CPU"
          connectNulls={false}
          isAnimationActive={false}
          stroke="var(--primary)"
          strokeWidth={1.5}
          fill="var(--primary)"
          fillOpacity={0.15}
        />
      </AreaChart>
    </ResponsiveContainer>
  );
}

export function MemoryChart({
  points,
  periods,
  now,
  windowMs,
  limitBytes,
}: ChartProps & { limitBytes: number | null }) {
  const [from, to] = domain(points, now, windowMs);
  const max = limitBytes ?? Math.max(1, ...points.map((p) => p.mem ?? 0));
  return (
    <ResponsiveContainer width="100%" height={180}>
      <AreaChart data={points} margin={{ top: 16, right: 0, bottom: 0, left: 0 }}>
        <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" vertical={false} />
        <XAxis
          dataKey="t"
          type="number"
          scale="time"
          domain={[from, to]}
          allowDataOverflow
          tickFormatter={formatClock}
          tick={AXIS}
          stroke="var(--border)"
          minTickGap={48}
        />
        {/* Bytes on the left, % of the limit on the right: the same scale, so one series reads on both. */}
        <YAxis
          yAxisId="bytes"
          domain={[0, max]}
          ticks={[0, max / 4, max / 2, (3 * max) / 4, max]}
          tickFormatter={(v: number) => formatBytes(v)}
          tick={AXIS}
          stroke="var(--border)"
          width={76}
        />
        <YAxis
          yAxisId="pct"
          orientation="right"
          domain={[0, 100]}
          ticks={[0, 25, 50, 75, 100]}
          tickFormatter={(v: number) => `${v}%`}
          tick={AXIS}
          stroke="var(--border)"
          width={40}
          hide={!limitBytes}
        />
        <PeriodAreas periods={periods} now={now} from={from} yAxisId="bytes" />
        <Tooltip
          content={(p) => (
            <TooltipBox
              {...p}
              render={(pt) =>
                `${formatBytes(pt.mem)}${pt.memPct !== null ? ` (${formatPercent(pt.memPct)} of the limit)` : ""}`
              }
            />
          )}
        />
        <Area
          yAxisId="bytes"
          type="linear"
          dataKey="mem"
          name="Memory"
          connectNulls={false}
          isAnimationActive={false}
          stroke="var(--success)"
          strokeWidth={1.5}
          fill="var(--success)"
          fillOpacity={0.15}
        />
      </AreaChart>
    </ResponsiveContainer>
  );
}
