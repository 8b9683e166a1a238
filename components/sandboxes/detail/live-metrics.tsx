"use client";

import dynamic from "next/dynamic";
import { memo, useRef, type ReactNode } from "react";
import { computeCostEur } from "../../../lib/pricing";
import { useUsageRates } from "../../usage/rates-context";
import { Alert, AlertDescription } from "../../ui/alert";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../../ui/card";
import { Skeleton } from "../../ui/skeleton";
import { formatBytes, formatDuration, formatEur, formatPercent } from "../../../lib/format";
import type { MetricSeries } from "./metrics-charts";
import { HISTORY_WINDOW_MS, type MetricPoint, type StatusPeriod } from "./metrics-history";
import { useChartVisibility } from "./use-chart-visibility";
import { useMetricsHistory } from "./use-metrics-history";
import { useNow } from "../../../lib/use-now";

// recharts only on this page, only in the browser (it measures its container), and only once a
// chart is on screen (LiveChart).
const chartFallback = () => <Skeleton className="h-[180px] w-full" />;
const MetricChart = dynamic(() => import("./metrics-charts").then((m) => m.MetricChart), {
  ssr: false,
  loading: chartFallback,
});

interface ChartData {
  series: MetricSeries;
  points: MetricPoint[];
  periods: StatusPeriod[];
  now: number;
  windowMs: number;
  limitBytes?: number | null;
}

/**
 * The chart or its placeholder (same height: nothing shifts when it loads). A redraw is a few dozen
 * milliseconds of main thread on a phone, so it happens only when the data changed and the chart is
 * on screen; off screen the samples keep accumulating and are drawn when it scrolls back.
 */
const ChartBody = memo(
  function ChartBody({ load, visible, ...chart }: ChartData & { load: boolean; visible: boolean }) {
    void visible; // for the comparison below only
    return load && chart.points.length ? <MetricChart {...chart} /> : chartFallback();
  },
  (prev, next) =>
    prev.load === next.load &&
    (!next.visible || (Object.keys(next) as (keyof typeof next)[]).every((k) => prev[k] === next[k])),
);

/** One live chart: loaded once half of it is on screen, redrawn while any of it is. */
function LiveChart(props: ChartData) {
  const ref = useRef<HTMLDivElement>(null);
  const { load, visible } = useChartVisibility(ref);
  return (
    <div ref={ref}>
      <ChartBody {...props} load={load} visible={visible} />
    </div>
  );
}

/** One chart with its caption and the text a screen reader gets in its place. */
function ChartFigure({
  name,
  title,
  label,
  children,
}: {
  name: string;
  title: string;
  label: string;
  children: ReactNode;
}) {
  return (
    <figure className="flex flex-col gap-2" aria-labelledby={`${name}-chart-title`}>
      <figcaption id={`${name}-chart-title`} className="text-sm font-medium">
        {title}
      </figcaption>
      <div data-testid={`${name}-chart`} role="img" aria-label={label}>
        {children}
      </div>
    </figure>
  );
}

function Stat({ label, value, sub, testId }: { label: string; value: string; sub?: string; testId?: string }) {
  return (
    <div className="flex flex-col gap-0.5">
      <dt className="text-xs text-muted-foreground">{label}</dt>
      <dd className="text-lg font-semibold tabular-nums" data-testid={testId}>
        {value}
      </dd>
      {/* An empty line until the first sample: the charts below do not move down when it comes. */}
      <dd className="text-xs text-muted-foreground" aria-hidden={sub ? undefined : true}>
        {sub ?? "\u00a0"}
      </dd>
    </div>
  );
}

/** Live CPU and memory (polled, accumulated), lifetime totals and the running cost in EUR. */
export function LiveMetrics({ id, status }: { id: string; status: string }) {
  const { history, error } = useMetricsHistory(id, status);
  const now = useNow();
  const m = history.latest;
  const running = m?.sandbox_status === "running";
  const cpuSeconds = Number(m?.lifetime?.cpu_seconds ?? 0);
  const gbSeconds = Number(m?.lifetime?.gb_seconds ?? 0);
  // The team's rate card (an estimate, as on /usage); null when the role may not read usage.
  const rates = useUsageRates();
  const cost = rates ? computeCostEur(cpuSeconds, gbSeconds, rates) : null;
  const cores = m?.cpu?.cores ?? null;
  const chartData = {
    points: history.points,
    periods: history.periods,
    // While samples arrive the charts end at the newest one, so they redraw once per sample rather
    // than on every tick of the clock as well; without samples (paused, stopped) the clock moves
    // the right edge, and the shaded period grows with it.
    now: (running ? history.lastSampleAt : now) ?? now ?? history.lastSampleAt ?? 0,
    windowMs: HISTORY_WINDOW_MS,
  };
  const notRunningNote =
    m && !running
      ? `No live usage while the sandbox is ${m.sandbox_status ?? status}: the charts show the gap, not zeros.`
      : null;

  return (
    <Card>
      <CardHeader>
        <CardTitle>Live usage</CardTitle>
        <CardDescription>
          Sampled every {formatDuration(history.intervalMs)}; the last {Math.round(HISTORY_WINDOW_MS / 60_000)} minutes
          are kept while this tab is open. Polling pauses while the tab is hidden.
        </CardDescription>
      </CardHeader>
      <CardContent className="flex flex-col gap-6">
        {error ? (
          <Alert variant="warning" role="status">
            <AlertDescription className="text-foreground">
              Metrics could not be read: {error.detail} Retrying.
            </AlertDescription>
          </Alert>
        ) : null}
        <dl className="grid grid-cols-2 gap-4 sm:grid-cols-3 lg:grid-cols-5">
          <Stat
            label="CPU now"
            testId="cpu-now"
            value={running ? formatPercent(m?.cpu?.usage_percent) : "—"}
            sub={
              running && m?.cpu?.usage_cores != null && cores
                ? `${m.cpu.usage_cores.toFixed(2)} of ${cores} ${cores === 1 ? "core" : "cores"}`
                : cores
                  ? `${cores} ${cores === 1 ? "core" : "cores"}`
                  : undefined
            }
          />
          <Stat
            label="Memory now"
            testId="memory-now"
            value={running ? formatBytes(m?.memory?.usage_bytes) : "—"}
            sub={
              running && m?.memory?.usage_percent != null
                ? `${formatPercent(m.memory.usage_percent)} of ${formatBytes(m.memory.limit_bytes)}`
                : m?.memory?.limit_bytes
                  ? `limit ${formatBytes(m.memory.limit_bytes)}`
                  : undefined
            }
          />
          <Stat label="CPU time (lifetime)" value={m ? `${cpuSeconds.toFixed(1)} s` : "—"} />
          <Stat
            label="Memory (lifetime)"
            value={m ? `${gbSeconds.toFixed(1)} GiB·s` : "—"}
            sub={m ? `${(gbSeconds / 3600).toFixed(4)} GiB·h` : undefined}
          />
          <Stat
            label="Cost so far"
            testId="cost-so-far"
            value={m && cost !== null ? formatEur(cost) : "—"}
            sub={cost === null ? "no access to the rate card" : "estimate at the team's rate card"}
          />
        </dl>
        {notRunningNote ? (
          <p role="status" data-testid="metrics-not-running" className="text-sm text-muted-foreground">
            {notRunningNote}
          </p>
        ) : null}
        <div className="grid gap-6 lg:grid-cols-2">
          <ChartFigure
            name="cpu"
            title="CPU (% of allocated cores)"
            label={`CPU usage over time${running ? `, now ${formatPercent(m?.cpu?.usage_percent)}` : ""}`}
          >
            <LiveChart series="cpu" {...chartData} />
          </ChartFigure>
          <ChartFigure
            name="memory"
            title="Memory (working set; % of the limit on the right)"
            label={`Memory usage over time${running ? `, now ${formatBytes(m?.memory?.usage_bytes)}` : ""}`}
          >
            <LiveChart series="memory" limitBytes={history.limitBytes} {...chartData} />
          </ChartFigure>
        </div>
      </CardContent>
    </Card>
  );
}
