"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import dynamic from "next/dynamic";
import { useSearchParams } from "next/navigation";
import { useId, useMemo, useState, type FormEvent, type ReactNode } from "react";
import { formatMicro, formatUtc } from "../../lib/format";
import { sandboxHref } from "../../lib/links";
import { usageKeys, usageQueries } from "../../lib/queries/usage";
import { TEAM_PARAM } from "../../lib/team-param";
import { formatHoursLeft, hoursLeft, nextPollMs } from "../../lib/usage/live";
import { rangeFromParams, rangePresets, rangeProblem, sameRange, type DayRange } from "../../lib/usage/range";
import { type UsageReport } from "../../lib/usage/report";
import { dayRows, seriesKeys, type Grouping } from "../../lib/usage/series";
import {
  daysTable,
  membersTable,
  runningTable,
  sandboxesTable,
  storageTable,
  type SandboxSort,
} from "../../lib/usage/tables";
import { cn } from "../../lib/utils";
import { EmptyState } from "../layout/empty-state";
import { RetryNotice } from "../layout/lazy-notices";
import { usePermission } from "../layout/permissions";
import { QueryError } from "../layout/query-error";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { Button } from "../ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../ui/card";
import { Input } from "../ui/input";
import { Label } from "../ui/label";
import { Skeleton } from "../ui/skeleton";
import { RateCard } from "./rate-card";
import { SERIES_COLOURS } from "./series-colours";
import { CsvButton, UsageTableView } from "./usage-table";

// recharts only on this page, only in the browser (it measures its container).
const DailyCostChart = dynamic(() => import("./daily-cost-chart"), {
  ssr: false,
  loading: () => <Skeleton className="h-[260px] w-full" />,
});

const TOP_SANDBOXES = 20;

function setUrl(range: DayRange) {
  const url = new URL(window.location.href);
  // The range's keys are replaced; the tab's team (`?team=`) stays.
  for (const key of [...url.searchParams.keys()]) if (key !== TEAM_PARAM) url.searchParams.delete(key);
  url.searchParams.set("from", range.from);
  url.searchParams.set("to", range.to);
  window.history.replaceState(window.history.state, "", url);
}

/** The /usage page's live part: the range, the month's figures, the daily chart and the tables. */
export function UsageView() {
  const params = useSearchParams();
  // Read once: later changes are this component's own (replaceState).
  const [initial] = useState(() => rangeFromParams(new URLSearchParams(params?.toString() ?? ""), Date.now()));
  const [range, setRange] = useState<DayRange>(initial.range);
  const [urlProblem, setUrlProblem] = useState<string | null>(initial.problem);
  const report = useQuery({
    ...usageQueries.report(range),
    placeholderData: keepPreviousData,
    refetchInterval: (q) => nextPollMs(q.state.data, Date.now()),
  });

  const apply = (next: DayRange) => {
    setRange(next);
    setUrlProblem(null);
    setUrl(next);
  };

  const data = report.data;
  return (
    <div className="flex flex-col gap-6">
      <RangeForm range={range} onApply={apply} />
      {urlProblem ? (
        <Alert variant="warning" role="status">
          <AlertTitle>The dates in the address were not used</AlertTitle>
          <AlertDescription className="text-foreground">{urlProblem}</AlertDescription>
        </Alert>
      ) : null}
      {report.isPending ? (
        <>
          <RetryNotice query={report} queryKey={usageKeys.report(range)} title="Usage could not be read just now" />
          <UsageSkeleton />
        </>
      ) : report.isError && !data ? (
        <QueryError
          title="Usage could not be read"
          error={report.error}
          fallback="Baton could not read this team's usage."
          onRetry={() => void report.refetch()}
        />
      ) : data ? (
        <>
          {report.isError ? (
            <QueryError
              title="Refreshing usage failed: the figures below are from the last successful read"
              error={report.error}
              fallback="Baton could not read this team's usage."
              onRetry={() => void report.refetch()}
            />
          ) : null}
          <UsageBody report={data} range={range} stale={report.isPlaceholderData} />
        </>
      ) : null}
    </div>
  );
}

function RangeForm({ range, onApply }: { range: DayRange; onApply: (r: DayRange) => void }) {
  const ids = useId();
  const [draft, setDraft] = useState(range);
  const [problem, setProblem] = useState<string | null>(null);
  // The presets are of the day the page was opened (UTC).
  const [now] = useState(() => Date.now());
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const p = rangeProblem(draft, Date.now());
    setProblem(p);
    if (!p) onApply(draft);
  };
  const choose = (r: DayRange) => {
    setDraft(r);
    setProblem(null);
    onApply(r);
  };
  return (
    <section aria-labelledby={`${ids}-title`} className="flex flex-col gap-3 rounded-lg border bg-card p-4">
      <h2 id={`${ids}-title`} className="text-sm font-medium">
        Dates <span className="font-normal text-muted-foreground">(days in UTC)</span>
      </h2>
      <form onSubmit={submit} className="flex flex-col gap-3 sm:flex-row sm:items-end" aria-label="Usage dates">
        <div className="flex flex-col gap-1">
          <Label htmlFor={`${ids}-from`}>From (UTC)</Label>
          <Input
            id={`${ids}-from`}
            type="date"
            value={draft.from}
            onChange={(e) => setDraft({ ...draft, from: e.target.value })}
            aria-invalid={problem ? true : undefined}
          />
        </div>
        <div className="flex flex-col gap-1">
          <Label htmlFor={`${ids}-to`}>To (UTC, included)</Label>
          <Input
            id={`${ids}-to`}
            type="date"
            value={draft.to}
            onChange={(e) => setDraft({ ...draft, to: e.target.value })}
            aria-invalid={problem ? true : undefined}
          />
        </div>
        <Button type="submit" variant="secondary">
          Show
        </Button>
      </form>
      <div className="flex flex-wrap gap-2" role="group" aria-label="Quick ranges">
        {rangePresets(now).map((p) => (
          <Button
            key={p.label}
            size="sm"
            variant={sameRange(p.range, range) ? "secondary" : "ghost"}
            aria-pressed={sameRange(p.range, range)}
            onClick={() => choose(p.range)}
          >
            {p.label}
          </Button>
        ))}
      </div>
      {problem ? (
        <p role="alert" className="text-sm text-destructive">
          {problem}
        </p>
      ) : null}
    </section>
  );
}

function Figure({
  term,
  value,
  micro,
  testId,
  children,
}: {
  term: string;
  value: string;
  micro: number;
  testId: string;
  children?: ReactNode;
}) {
  return (
    <div className="flex min-w-0 flex-col gap-1 rounded-lg border bg-card p-4">
      <dt className="text-xs text-muted-foreground">{term}</dt>
      <dd className="text-2xl font-semibold tabular-nums" data-testid={testId} data-micro={micro}>
        {value}
      </dd>
      {children ? <dd className="text-xs text-muted-foreground">{children}</dd> : null}
    </div>
  );
}

function UsageBody({ report: r, range, stale }: { report: UsageReport; range: DayRange; stale: boolean }) {
  const canManage = usePermission("billing.manage");
  const self = r.scope === "self";
  const empty = r.totals.cost_micro === 0 && r.sandboxes.length === 0;
  const left = hoursLeft(r.month, r.generated_at);
  const hrefOf = (id: string) => sandboxHref(id);
  return (
    <div className={cn("flex flex-col gap-6", stale && "opacity-70")} aria-busy={stale || undefined}>
      <p className="text-sm text-muted-foreground" role="status" data-testid="usage-scope">
        {self
          ? "Your usage: the sandboxes you created. The team's total is beside it."
          : "Everyone's usage in this team."}{" "}
        Last read {r.last_reading_at ? formatUtc(r.last_reading_at) : "not yet"}
        {r.next_reading_at ? `; next reading ${formatUtc(r.next_reading_at)}` : ""}.
      </p>

      <section aria-labelledby="usage-month" className="flex flex-col gap-3">
        <h2 id="usage-month" className="text-lg font-semibold">
          This month ({r.month.month}, UTC)
        </h2>
        <dl className="grid grid-cols-1 gap-4 sm:grid-cols-2 xl:grid-cols-4">
          <Figure
            term={self ? "Your month so far" : "This month so far"}
            value={formatMicro(r.month.so_far_micro)}
            micro={r.month.so_far_micro}
            testId="usage-month-so-far"
          >
            Metered from the 1st to the last reading.
          </Figure>
          <Figure
            term="Run-rate (EUR per hour)"
            value={`${formatMicro(r.month.run_rate_micro_per_hour)}/h`}
            micro={r.month.run_rate_micro_per_hour}
            testId="usage-run-rate"
          >
            {r.month.running.length} running sandbox{r.month.running.length === 1 ? "" : "es"}, from their last two
            readings.
          </Figure>
          <Figure
            term="Forecast to the month's end"
            value={formatMicro(r.month.forecast_micro)}
            micro={r.month.forecast_micro}
            testId="usage-forecast"
          >
            Forecast: a straight line from the run-rate. The month so far plus {formatHoursLeft(left)} at{" "}
            {formatMicro(r.month.run_rate_micro_per_hour)}/h.
          </Figure>
          <Figure
            term={self ? "In these dates: yours / the team's" : "In these dates"}
            value={
              self
                ? `${formatMicro(r.totals.cost_micro)} / ${formatMicro(r.team_totals.cost_micro)}`
                : formatMicro(r.totals.cost_micro)
            }
            micro={r.totals.cost_micro}
            testId="usage-range-total"
          >
            {r.from} to {r.to} (UTC), {r.totals.sandboxes} sandbox{r.totals.sandboxes === 1 ? "" : "es"}
            {self ? (
              <span data-testid="usage-team-total" data-micro={r.team_totals.cost_micro}>
                ; the team: {formatMicro(r.team_totals.cost_micro)}
              </span>
            ) : null}
          </Figure>
        </dl>
        {r.month.running.length ? (
          <details className="rounded-lg border bg-card p-4" data-testid="usage-running">
            <summary className="cursor-pointer text-sm font-medium">
              What makes up the run-rate ({r.month.running.length})
            </summary>
            <div className="mt-3">
              <UsageTableView table={runningTable(r.month.running, r.members, hrefOf)} />
            </div>
          </details>
        ) : null}
      </section>

      {empty ? (
        <EmptyState
          icon={
            <svg viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" aria-hidden="true">
              <path d="M4 20V10M10 20V4M16 20v-7M22 20H2" strokeLinecap="round" />
            </svg>
          }
          title="No usage in these dates"
          description={
            <>
              Baton counts the on-CPU seconds and the working-set memory (GiB-seconds) of{" "}
              {self ? "the sandboxes you create" : "this team's sandboxes"}, read from orkestr while they run, and
              prices them with the rate card below. Paused sandboxes cost only their storage.
            </>
          }
        />
      ) : (
        <>
          <DailyCost report={r} range={range} />
          <TopSandboxes report={r} range={range} />
          <Card data-testid="usage-members">
            <CardHeader className="flex flex-row flex-wrap items-start justify-between gap-3">
              <div className="flex flex-col gap-1.5">
                <CardTitle>{self ? "Your usage" : "Per member"}</CardTitle>
                <CardDescription>
                  CPU-seconds of on-CPU time, GiB-seconds of working-set memory. &ldquo;outside Baton&rdquo;: sandboxes
                  made with the SDK or the API directly.
                </CardDescription>
              </div>
              <CsvButton table={membersTable(r.members)} range={range} />
            </CardHeader>
            <CardContent>
              <UsageTableView table={membersTable(r.members)} />
            </CardContent>
          </Card>
        </>
      )}

      {r.storage ? (
        <Card data-testid="usage-storage">
          <CardHeader className="flex flex-row flex-wrap items-start justify-between gap-3">
            <div className="flex flex-col gap-1.5">
              <CardTitle>Storage</CardTitle>
              <CardDescription>
                Volumes, snapshots and templates now, in GB (decimal gigabytes, as orkestr bills storage). The first{" "}
                {r.storage.free_gb} GB are free; the monthly estimate is what a month of the billable GB costs.
              </CardDescription>
            </div>
            <CsvButton table={storageTable(r.storage)} range={range} />
          </CardHeader>
          <CardContent>
            <UsageTableView table={storageTable(r.storage)} />
          </CardContent>
        </Card>
      ) : null}

      <RateCard rates={r.rates} canManage={canManage} />
    </div>
  );
}

function Toggle<T extends string>({
  label,
  value,
  options,
  onChange,
}: {
  label: string;
  value: T;
  options: { value: T; label: string }[];
  onChange: (v: T) => void;
}) {
  return (
    <div role="group" aria-label={label} className="inline-flex rounded-md border p-0.5">
      {options.map((o) => (
        <Button
          key={o.value}
          size="sm"
          variant={o.value === value ? "secondary" : "ghost"}
          aria-pressed={o.value === value}
          onClick={() => onChange(o.value)}
          className="h-7"
        >
          {o.label}
        </Button>
      ))}
    </div>
  );
}

function DailyCost({ report: r, range }: { report: UsageReport; range: DayRange }) {
  const [grouping, setGrouping] = useState<Grouping>("member");
  const [view, setView] = useState<"chart" | "table">("chart");
  const keys = useMemo(() => seriesKeys(r.days, grouping, r.members), [r.days, r.members, grouping]);
  const rows = useMemo(() => dayRows(r.days, grouping, keys), [r.days, grouping, keys]);
  const table = daysTable(rows, keys, grouping);
  const label = `Cost per day from ${r.from} to ${r.to} (UTC), stacked by ${grouping}: ${keys
    .map((k) => `${k.label} ${formatMicro(k.total_micro)}`)
    .join(", ")}; total ${formatMicro(r.totals.cost_micro)}. The table view has every day's figures.`;
  return (
    <Card data-testid="usage-days">
      <CardHeader className="flex flex-col gap-3 sm:flex-row sm:items-start sm:justify-between">
        <div className="flex flex-col gap-1.5">
          <CardTitle>Cost per day</CardTitle>
          <CardDescription>Days in UTC; one hover away on the chart, every figure in the table view.</CardDescription>
        </div>
        <div className="flex flex-wrap items-center gap-2">
          <Toggle
            label="Stack by"
            value={grouping}
            onChange={setGrouping}
            options={[
              { value: "member", label: "By member" },
              { value: "template", label: "By template" },
            ]}
          />
          <Toggle
            label="View"
            value={view}
            onChange={setView}
            options={[
              { value: "chart", label: "Chart" },
              { value: "table", label: "Table" },
            ]}
          />
          <CsvButton table={table} range={range} />
        </div>
      </CardHeader>
      <CardContent className="flex flex-col gap-3">
        {view === "chart" ? (
          // The chart is keyboard-reachable (recharts' accessibility layer: arrows move the
          // tooltip from day to day) and named; the table view is its full equivalent.
          <figure className="flex flex-col gap-2" aria-label={label} data-testid="usage-chart">
            <DailyCostChart rows={rows} keys={keys} title={label} />
            <figcaption>
              <ul className="flex flex-wrap gap-x-4 gap-y-1 text-xs" aria-label="Legend">
                {keys.map((k, i) => (
                  <li key={k.key} className="flex items-center gap-1.5">
                    <span
                      aria-hidden="true"
                      className="size-2.5 rounded-sm"
                      style={{ background: SERIES_COLOURS[i] }}
                    />
                    {k.label}: {formatMicro(k.total_micro)}
                  </li>
                ))}
              </ul>
            </figcaption>
          </figure>
        ) : (
          <UsageTableView table={table} />
        )}
      </CardContent>
    </Card>
  );
}

function SortHeader({
  column,
  sort,
  by,
  onSort,
}: {
  column: string;
  sort: SandboxSort;
  by: SandboxSort;
  onSort: (s: SandboxSort) => void;
}) {
  return (
    <button
      type="button"
      onClick={() => onSort(by)}
      className={cn("underline-offset-4 hover:underline", sort === by && "font-semibold text-foreground")}
      aria-label={`${column}${sort === by ? ", sorted, most first" : ", sort by this, most first"}`}
    >
      {column}
      {sort === by ? " ↓" : ""}
    </button>
  );
}

const SORT_COLUMNS: Record<string, SandboxSort> = {
  "CPU-seconds": "cpu",
  "GiB-seconds": "memory",
  "Cost (EUR)": "cost",
};

function TopSandboxes({ report: r, range }: { report: UsageReport; range: DayRange }) {
  const [sort, setSort] = useState<SandboxSort>("cost");
  const [all, setAll] = useState(false);
  const table = sandboxesTable(r.sandboxes, r.members, sort, all ? r.sandboxes.length : TOP_SANDBOXES, (id) =>
    sandboxHref(id),
  );
  return (
    <Card data-testid="usage-sandboxes">
      <CardHeader className="flex flex-row flex-wrap items-start justify-between gap-3">
        <div className="flex flex-col gap-1.5">
          <CardTitle>Top sandboxes</CardTitle>
          <CardDescription>
            {table.rows.length} of {r.sandboxes.length} with usage in these dates, most first by the column chosen.
          </CardDescription>
        </div>
        <CsvButton table={table} range={range} />
      </CardHeader>
      <CardContent className="flex flex-col gap-3">
        <UsageTableView
          table={table}
          sortedColumn={Object.keys(SORT_COLUMNS).find((c) => SORT_COLUMNS[c] === sort)}
          headerCell={(c) =>
            SORT_COLUMNS[c] ? <SortHeader column={c} sort={sort} by={SORT_COLUMNS[c]} onSort={setSort} /> : c
          }
        />
        {r.sandboxes.length > TOP_SANDBOXES ? (
          <Button variant="outline" size="sm" className="self-start" onClick={() => setAll(!all)}>
            {all ? `Show the top ${TOP_SANDBOXES}` : `Show all ${r.sandboxes.length}`}
          </Button>
        ) : null}
      </CardContent>
    </Card>
  );
}

function UsageSkeleton() {
  return (
    <div className="flex flex-col gap-6" aria-busy="true" data-testid="usage-loading">
      <p className="sr-only" role="status">
        Loading usage…
      </p>
      <div className="grid grid-cols-1 gap-4 sm:grid-cols-2 xl:grid-cols-4">
        {Array.from({ length: 4 }, (_, i) => (
          <Skeleton key={i} className="h-28" />
        ))}
      </div>
      <Skeleton className="h-80 w-full" />
      <Skeleton className="h-48 w-full" />
    </div>
  );
}
