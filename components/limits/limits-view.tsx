"use client";

import { QueryError } from "../layout/query-error";
import { useQuery } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { formatClock, formatDuration, formatGibibytes } from "../../lib/format";
import { errorText } from "../../lib/orkestr/errors";
import type { Limits } from "../../lib/orkestr/schemas/limits";
import { limitsKey, limitsQueries, LIMITS_POLL_MS } from "../../lib/queries/limits";
import { cn } from "../../lib/utils";
import { RetryNotice, SlowNotice } from "../layout/retry-notice";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { Badge } from "../ui/badge";
import { Button } from "../ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../ui/card";
import { CodeTabs } from "../ui/code-tabs";
import { Skeleton } from "../ui/skeleton";
import { GaugeCard } from "./gauge-card";
import { HostClamp, IsolationReport } from "./host-section";
import { limitsSnippets } from "./limits-code";
import { gauges, isLocalEngine, sizeRows } from "./limits-model";
import { SizesTable } from "./sizes-table";

/**
 * The Limits page's live part: one GET /api/v1/sandboxes/limits, re-read every few seconds while
 * the page is visible, shown as the plan, each used/cap pair, the size menu, regions and egress
 * hosts, and (local engine) the machine's clamp and isolation report. `teamName`: the team whose
 * connection this is (its figures are that team's), or null when the connection has none.
 */
export function LimitsView({ baseUrl, teamName }: { baseUrl: string; teamName: string | null }) {
  const limits = useQuery(limitsQueries.live());
  const data = limits.data;
  return (
    <div className="flex flex-col gap-6">
      <RetryNotice query={limits} queryKey={limitsKey()} title="Your limits could not be read just now">
        {data ? <p>The figures below are from the last successful read.</p> : null}
      </RetryNotice>
      {limits.isError && data ? (
        <Alert variant="warning" role="status">
          <AlertTitle>Refreshing your limits failed</AlertTitle>
          <AlertDescription className="text-foreground">
            {errorText(limits.error)} The figures below are from {formatClock(limits.dataUpdatedAt)}.
          </AlertDescription>
        </Alert>
      ) : null}
      {data ? (
        <LimitsBody limits={data} teamName={teamName} />
      ) : limits.isError ? (
        <QueryError
          title="Could not read your limits"
          error={limits.error}
          fallback="The limits could not be loaded."
          onRetry={() => void limits.refetch()}
        />
      ) : (
        <LimitsSkeleton waiting={limits.isFetching} />
      )}
      {data ? (
        <div className="flex flex-wrap items-center gap-x-4 gap-y-2 text-sm text-muted-foreground">
          <p data-testid="limits-updated">
            Refreshes every {LIMITS_POLL_MS / 1000} s while this page is visible · read at{" "}
            {formatClock(limits.dataUpdatedAt)}
          </p>
          <Button size="sm" variant="ghost" onClick={() => void limits.refetch()} disabled={limits.isFetching}>
            {limits.isFetching ? "Refreshing…" : "Refresh now"}
          </Button>
        </div>
      ) : null}
      <Card>
        <CardHeader>
          <CardTitle>Read these limits in code</CardTitle>
          <CardDescription>
            The same figures from the SDK or the API (GET /v1/limits, alias of GET /v1/sandboxes/limits), with your API
            key in ORKESTR_API_KEY.
          </CardDescription>
        </CardHeader>
        <CardContent>
          <CodeTabs snippets={limitsSnippets(baseUrl)} testId="limits-code" />
        </CardContent>
      </Card>
    </div>
  );
}

function Section({
  title,
  description,
  children,
  testId,
}: {
  title: string;
  description?: ReactNode;
  children: ReactNode;
  testId?: string;
}) {
  return (
    <Card data-testid={testId}>
      <CardHeader>
        <CardTitle>{title}</CardTitle>
        {description ? <CardDescription>{description}</CardDescription> : null}
      </CardHeader>
      <CardContent>{children}</CardContent>
    </Card>
  );
}

function Fact({
  term,
  children,
  testId,
  className,
}: {
  term: string;
  children: ReactNode;
  testId?: string;
  className?: string;
}) {
  return (
    <div className={cn("flex min-w-0 flex-col gap-0.5", className)}>
      <dt className="text-xs text-muted-foreground">{term}</dt>
      <dd className="text-sm font-medium" data-testid={testId}>
        {children}
      </dd>
    </div>
  );
}

const yesNo = (v: boolean | null | undefined, yes: string, no: string) =>
  v === undefined || v === null ? "—" : v ? yes : no;

function LimitsBody({ limits: l, teamName }: { limits: Limits; teamName: string | null }) {
  const local = isLocalEngine(l);
  return (
    <>
      <Section
        title="Plan"
        testId="plan"
        description={
          // Not `l.account.name`: for the local engine that is Baton's internal team id.
          teamName
            ? `Every figure on this page counts the ${teamName} team's resources only.`
            : "The caps your API key's plan sets."
        }
      >
        <dl className="grid grid-cols-2 gap-4 sm:grid-cols-3 lg:grid-cols-4">
          <Fact term="Plan" testId="plan-name">
            <Badge variant="outline" className="text-sm">
              {l.plan ?? "not reported"}
            </Badge>
          </Fact>
          {teamName ? (
            <Fact term="Team" testId="plan-team" className="break-words">
              {teamName}
            </Fact>
          ) : null}
          <Fact term="Small sandboxes at once" testId="plan-max-concurrent">
            {l.max_concurrent ?? "—"}
          </Fact>
          <Fact term="Longest countdown" testId="plan-max-timeout">
            {typeof l.max_timeout_seconds === "number" ? formatDuration(l.max_timeout_seconds * 1000) : "—"}
          </Fact>
          <Fact term="Continuous running" testId="plan-max-running">
            {typeof l.max_running_seconds === "number"
              ? `at most ${formatDuration(l.max_running_seconds * 1000)}`
              : l.max_running_seconds === null
                ? "no cap"
                : "—"}
          </Fact>
          <Fact term="Open network" testId="plan-network-open">
            {yesNo(l.network_open_allowed, "allowed", "not allowed")}
          </Fact>
          <Fact term="Preview URLs" testId="plan-previews">
            {yesNo(l.previews_allowed, "allowed", "not allowed")}
          </Fact>
          <Fact term="Largest volume" testId="plan-max-volume">
            {formatGibibytes(typeof l.max_volume_gb === "number" ? l.max_volume_gb : null)}
          </Fact>
          {l.engine?.name ? (
            <Fact term="Server" testId="plan-engine">
              {l.engine.name}
              {l.engine.kind ? ` (${l.engine.kind})` : ""}
            </Fact>
          ) : null}
        </dl>
      </Section>

      <section aria-labelledby="limits-caps" className="flex flex-col gap-3">
        <h2 id="limits-caps" className="text-lg font-semibold">
          Used against your caps
        </h2>
        <div className="grid gap-4 md:grid-cols-2 xl:grid-cols-3">
          {gauges(l).map((g) => (
            <GaugeCard key={g.id} gauge={g} />
          ))}
        </div>
      </section>

      <Section
        title="Sizes"
        testId="sizes"
        description="The size menu is the same on every plan; which sizes you can create depends on the plan and, on Baton's local engine, on this machine's RAM."
      >
        <SizesTable rows={sizeRows(l)} />
      </Section>

      <div className="grid gap-6 lg:grid-cols-2">
        <Section title="Regions" testId="regions" description="Where a sandbox or volume may be placed (region=…).">
          {l.regions?.length ? (
            <ul className="flex flex-wrap gap-2" aria-label="Regions" data-testid="regions-list">
              {l.regions.map((r) => (
                <li key={r}>
                  <Badge variant="neutral" className="font-mono text-sm">
                    {r}
                  </Badge>
                </li>
              ))}
            </ul>
          ) : (
            <p className="text-sm text-muted-foreground">The server reports no regions.</p>
          )}
        </Section>
        <Section
          title="Default egress domains"
          testId="egress"
          description="The HTTPS hosts a restricted sandbox reaches unless allow_domains replaces the list."
        >
          {l.default_egress_domains?.length ? (
            <ul className="flex flex-wrap gap-2" aria-label="Default egress domains" data-testid="egress-list">
              {l.default_egress_domains.map((d) => (
                <li key={d}>
                  <code className="rounded-md border bg-muted px-2 py-0.5 font-mono text-xs">{d}</code>
                </li>
              ))}
            </ul>
          ) : (
            <p className="text-sm text-muted-foreground">The server reports no default egress domains.</p>
          )}
        </Section>
      </div>

      {local && l.host_capacity ? (
        <Section
          title="This machine (host clamp)"
          testId="host"
          description="Plans count per account; this is what the machine running Baton's local engine can hold for every account together, after what it keeps for itself."
        >
          <HostClamp host={l.host_capacity} />
        </Section>
      ) : null}
      {local && l.isolation ? (
        <Section
          title="Isolation on this machine"
          testId="isolation"
          description="How the local engine separates sandboxes from each other and from the host, as it measured at start."
        >
          <IsolationReport isolation={l.isolation} />
        </Section>
      ) : null}
    </>
  );
}

function LimitsSkeleton({ waiting }: { waiting: boolean }) {
  return (
    <div className="flex flex-col gap-6" aria-busy="true" data-testid="limits-loading">
      <SlowNotice waiting={waiting} what="your limits" />
      <p className="sr-only" role="status">
        Loading your limits…
      </p>
      <Skeleton className="h-32 w-full" />
      <div className="grid gap-4 md:grid-cols-2 xl:grid-cols-3">
        {Array.from({ length: 6 }, (_, i) => (
          <Skeleton key={i} className="h-48" />
        ))}
      </div>
      <Skeleton className="h-40 w-full" />
    </div>
  );
}
