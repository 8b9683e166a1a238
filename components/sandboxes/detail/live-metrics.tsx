"use client";

import dynamic from "next/dynamic";
import type { ReactNode } from "react";
import { computeCostEur, formatEur } from "../../../lib/pricing";
import { Alert, AlertDescription } from "../../ui/alert";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../../ui/card";
import { Skeleton } from "../../ui/skeleton";
import { formatBytes, formatDuration, formatPercent } from "../../../lib/format";
import { HISTORY_WINDOW_MS } from "./metrics-history";
import { useMetricsHistory } from "./use-metrics-history";
import { useNow } from "../../../lib/use-now";

// recharts only on this page, and only in the browser (it measures its container).
const chartFallback = () => <Skeleton className="h-[180px] w-full" />;
const MetricChart = dynamic(() => import("./metrics-charts").then((m) => m.MetricChart), {
  ssr: false,
  loading: chartFallback,
});

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
      {sub ? <dd className="text-xs text-muted-foreground">{sub}</dd> : null}
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
  const cost = computeCostEur(cpuSeconds, gbSeconds);
  const cores = m?.cpu?.cores ?? null;
  const chartData = {
    points: history.points,
    periods: history.periods,
    now: now ?? history.lastSampleAt ?? 0,
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
          {/* Under a hundredth of a cent the four decimals would read €0.0000: say "under" instead. */}
          <Stat
            label="Cost so far"
            testId="cost-so-far"
            value={m ? (cost > 0 && cost < 0.0001 ? `< ${formatEur(0.0001)}` : formatEur(cost)) : "—"}
            sub="pay-as-you-go rates"
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
            {history.points.length ? <MetricChart series="cpu" {...chartData} /> : chartFallback()}
          </ChartFigure>
          <ChartFigure
            name="memory"
            title="Memory (working set; % of the limit on the right)"
            label={`Memory usage over time${running ? `, now ${formatBytes(m?.memory?.usage_bytes)}` : ""}`}
          >
            {history.points.length ? (
              <MetricChart series="memory" limitBytes={history.limitBytes} {...chartData} />
            ) : (
              chartFallback()
            )}
          </ChartFigure>
        </div>
      </CardContent>
    </Card>
  );
}
