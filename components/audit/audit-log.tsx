"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import dynamic from "next/dynamic";
import { TeamLink as Link, useTeamSlug } from "../layout/team-link";
import { TEAM_PARAM, withTeam } from "../../lib/team-param";
import { useSearchParams } from "next/navigation";
import { useId, useMemo, useState, type FormEvent } from "react";
import {
  auditFilterFromParams,
  auditFilterProblem,
  auditFilterToParams,
  cleanAuditFilter,
  formatAuditQuery,
  parseAuditQuery,
  type AuditFilter,
} from "../../lib/audit-query";
import { AUDIT_ACTIONS, AUDIT_RESULTS, AUDIT_TARGET_TYPES } from "../../lib/audit-actions";
import { formatDateTime, formatUtc } from "../../lib/format";
import { sandboxHref } from "../../lib/links";
import { auditExportHref, auditKeys, auditQueries, type AuditEventRow } from "../../lib/queries/audit";
import { snapshotHref, templateHref, volumesHref, webhookHref } from "../../lib/resource-links";
import { EmptyState } from "../layout/empty-state";
import { QueryError } from "../layout/query-error";
import { RetryNotice } from "../layout/lazy-notices";
import { Badge } from "../ui/badge";
import { Button } from "../ui/button";
import { Input } from "../ui/input";
import { Label } from "../ui/label";
import { Skeleton } from "../ui/skeleton";
import { TableScroll } from "../ui/table";

// Owners only, and below the fold: loaded when shown.
const AuditSettingsCard = dynamic(() => import("./audit-settings").then((m) => m.AuditSettingsCard), {
  loading: () => <Skeleton className="h-40 w-full" />,
});

const GONE = /\.(terminate|delete)$/;

/** Where a target's page is, for the types that have one. */
function targetHref(type: string | null, id: string | null): string | null {
  if (!type || !id) return null;
  switch (type) {
    case "sandbox":
      return sandboxHref(id);
    case "snapshot":
      return snapshotHref(id);
    case "volume":
      return volumesHref(id);
    case "template":
      return templateHref(id);
    case "webhook":
      return webhookHref(id);
    default:
      return null;
  }
}

function setUrl(filter: AuditFilter) {
  const url = new URL(window.location.href);
  // The filter's own keys are replaced; the tab's team (`?team=`) stays.
  for (const key of [...url.searchParams.keys()]) if (key !== TEAM_PARAM) url.searchParams.delete(key);
  for (const [k, v] of Object.entries(auditFilterToParams(filter))) url.searchParams.set(k, v);
  window.history.replaceState(window.history.state, "", url);
}

export function AuditLog({ teamName, canManage }: { teamName: string; canManage: boolean }) {
  const params = useSearchParams();
  // The export is a plain download (no X-Baton-Team header): its URL names the tab's team.
  const team = useTeamSlug();
  const initial = useMemo(() => {
    const f = cleanAuditFilter(auditFilterFromParams(new URLSearchParams(params?.toString() ?? "")));
    return auditFilterProblem(f) ? {} : f;
    // Read once: later changes are this component's own (replaceState).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  const [filter, setFilter] = useState<AuditFilter>(initial);
  const [draft, setDraft] = useState<AuditFilter>(initial);
  const [queryText, setQueryText] = useState(() => formatAuditQuery(initial));
  const [queryError, setQueryError] = useState<string | null>(null);
  const [controlsError, setControlsError] = useState<string | null>(null);
  const ids = useId();
  const list = useInfiniteQuery(auditQueries.list(filter));
  const events = useMemo(() => list.data?.pages.flatMap((p) => p.items) ?? [], [list.data]);
  const gone = useMemo(
    () =>
      new Set(events.filter((e) => GONE.test(e.action) && e.target_id).map((e) => `${e.target_type}:${e.target_id}`)),
    [events],
  );

  const apply = (next: AuditFilter) => {
    const clean = cleanAuditFilter(next);
    setFilter(clean);
    setDraft(clean);
    setQueryText(formatAuditQuery(clean));
    setQueryError(null);
    setControlsError(null);
    setUrl(clean);
  };

  const submitQuery = (e: FormEvent) => {
    e.preventDefault();
    const parsed = parseAuditQuery(queryText);
    if (!parsed.ok) return setQueryError(parsed.error);
    apply(parsed.filter);
  };

  const submitControls = (e: FormEvent) => {
    e.preventDefault();
    const clean = cleanAuditFilter(draft);
    const problem = auditFilterProblem(clean);
    if (problem) return setControlsError(problem);
    apply(clean);
  };

  const field = (key: keyof AuditFilter) => ({
    id: `${ids}-${key}`,
    value: draft[key] ?? "",
    onChange: (e: { target: { value: string } }) => setDraft((d) => ({ ...d, [key]: e.target.value })),
  });
  const active = Object.keys(filter).length > 0;

  return (
    <div className="flex flex-col gap-6">
      <section aria-labelledby={`${ids}-filters`} className="flex flex-col gap-4 rounded-lg border bg-card p-4">
        <h2 id={`${ids}-filters`} className="sr-only">
          Filters
        </h2>
        <form onSubmit={submitQuery} className="flex flex-col gap-1" role="search" aria-label="Audit log search">
          <Label htmlFor={`${ids}-q`}>Query</Label>
          <div className="flex flex-col gap-2 sm:flex-row">
            <Input
              id={`${ids}-q`}
              name="q"
              value={queryText}
              onChange={(e) => setQueryText(e.target.value)}
              placeholder="action:sandbox.terminate actor:ana@example.test resource_type:sandbox"
              aria-invalid={queryError ? true : undefined}
              aria-describedby={`${ids}-q-help${queryError ? ` ${ids}-q-error` : ""}`}
              className="font-mono text-xs"
              spellCheck={false}
              autoComplete="off"
            />
            <Button type="submit" className="shrink-0">
              Search
            </Button>
          </div>
          <p id={`${ids}-q-help`} className="text-xs text-muted-foreground">
            Keys: action, actor (or email), resource_type, resource_id, result, date_from, date_to (YYYY-MM-DD).
          </p>
          {queryError ? (
            <p id={`${ids}-q-error`} role="alert" className="text-sm text-destructive">
              {queryError}
            </p>
          ) : null}
        </form>
        <form onSubmit={submitControls} className="flex flex-col gap-3" aria-label="Audit filters">
          <div className="grid grid-cols-1 gap-3 sm:grid-cols-2 lg:grid-cols-4">
            <div className="flex flex-col gap-1">
              <Label htmlFor={`${ids}-actor`}>Actor</Label>
              <Input {...field("actor")} placeholder="email or user id" autoComplete="off" />
            </div>
            <div className="flex flex-col gap-1">
              <Label htmlFor={`${ids}-action`}>Action</Label>
              <Input {...field("action")} list={`${ids}-actions`} placeholder="sandbox.terminate" autoComplete="off" />
              <datalist id={`${ids}-actions`}>
                {AUDIT_ACTIONS.map((a) => (
                  <option key={a} value={a} />
                ))}
              </datalist>
            </div>
            <div className="flex flex-col gap-1">
              <Label htmlFor={`${ids}-targetType`}>Target type</Label>
              <Input {...field("targetType")} list={`${ids}-types`} placeholder="sandbox" autoComplete="off" />
              <datalist id={`${ids}-types`}>
                {AUDIT_TARGET_TYPES.map((a) => (
                  <option key={a} value={a} />
                ))}
              </datalist>
            </div>
            <div className="flex flex-col gap-1">
              <Label htmlFor={`${ids}-targetId`}>Target id</Label>
              <Input {...field("targetId")} placeholder="sbx_…" autoComplete="off" />
            </div>
            <div className="flex flex-col gap-1">
              <Label htmlFor={`${ids}-result`}>Result</Label>
              <Input {...field("result")} list={`${ids}-results`} placeholder="ok or a code" autoComplete="off" />
              <datalist id={`${ids}-results`}>
                {AUDIT_RESULTS.map((a) => (
                  <option key={a} value={a} />
                ))}
              </datalist>
            </div>
            <div className="flex flex-col gap-1">
              <Label htmlFor={`${ids}-dateFrom`}>From (UTC)</Label>
              <Input {...field("dateFrom")} type="date" />
            </div>
            <div className="flex flex-col gap-1">
              <Label htmlFor={`${ids}-dateTo`}>To (UTC)</Label>
              <Input {...field("dateTo")} type="date" />
            </div>
            <div className="flex items-end gap-2">
              <Button type="submit" variant="secondary">
                Apply filters
              </Button>
              {active ? (
                <Button type="button" variant="ghost" onClick={() => apply({})}>
                  Clear
                </Button>
              ) : null}
            </div>
          </div>
          {controlsError ? (
            <p role="alert" className="text-sm text-destructive">
              {controlsError}
            </p>
          ) : null}
        </form>
      </section>

      <div className="flex flex-wrap items-center justify-between gap-3">
        <p className="text-sm text-muted-foreground" role="status">
          {list.isPending
            ? "Loading…"
            : `${events.length}${list.hasNextPage ? "+" : ""} event${events.length === 1 ? "" : "s"}${active ? " match" : ""} in ${teamName}`}
        </p>
        <div className="flex gap-2">
          <Button size="sm" variant="outline" asChild>
            <a href={withTeam(auditExportHref(filter, "csv"), team)} download data-testid="audit-export-csv">
              Export CSV
            </a>
          </Button>
          <Button size="sm" variant="outline" asChild>
            <a href={withTeam(auditExportHref(filter, "jsonl"), team)} download data-testid="audit-export-jsonl">
              Export JSON lines
            </a>
          </Button>
        </div>
      </div>

      {list.isPending ? (
        <>
          <RetryNotice query={list} queryKey={auditKeys.list(filter)} title="The audit log could not be read" />
          <Skeleton className="h-64 w-full" />
        </>
      ) : list.isError ? (
        <QueryError
          title="The audit log could not be read"
          error={list.error}
          fallback="Baton could not read the audit log."
          onRetry={() => void list.refetch()}
        />
      ) : events.length === 0 ? (
        <EmptyState
          icon={
            <svg viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" aria-hidden="true">
              <path d="M9 6h11M9 12h11M9 18h11M4 6h.01M4 12h.01M4 18h.01" strokeLinecap="round" />
            </svg>
          }
          title={active ? "No event matches these filters" : "Nothing recorded yet"}
          description={
            active
              ? "Widen the dates or clear a filter."
              : "Sign-ins, changes to members and connections, and sandbox and resource changes appear here as they happen."
          }
          action={
            active ? (
              <Button variant="outline" onClick={() => apply({})}>
                Clear filters
              </Button>
            ) : undefined
          }
        />
      ) : (
        <>
          <AuditTable events={events} gone={gone} />
          {list.hasNextPage ? (
            <div className="flex justify-center">
              <Button variant="outline" onClick={() => void list.fetchNextPage()} disabled={list.isFetchingNextPage}>
                {list.isFetchingNextPage ? "Loading…" : "Load older events"}
              </Button>
            </div>
          ) : null}
        </>
      )}

      {canManage ? <AuditSettingsCard /> : null}
    </div>
  );
}

function ResultBadge({ result }: { result: string }) {
  return result === "ok" ? (
    <Badge variant="success">ok</Badge>
  ) : (
    <Badge variant="destructive" title="The request was refused with this code">
      {result}
    </Badge>
  );
}

function show(v: unknown): string {
  if (v === undefined) return "—";
  return typeof v === "string" ? v : JSON.stringify(v);
}

/** The keys whose values differ between before and after. */
function Diff({ data }: { data: unknown }) {
  const d = data as { before?: Record<string, unknown>; after?: Record<string, unknown> } | null;
  if (!d || typeof d !== "object" || (!d.before && !d.after)) return null;
  const before = d.before ?? {};
  const after = d.after ?? {};
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
    (k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]),
  );
  if (keys.length === 0) return <p className="text-xs text-muted-foreground">No field changed.</p>;
  return (
    <TableScroll>
      <table className="text-xs">
        <caption className="sr-only">Changed fields</caption>
        <thead>
          <tr className="text-left text-muted-foreground">
            <th scope="col" className="pr-3 font-medium">
              Field
            </th>
            <th scope="col" className="pr-3 font-medium">
              Before
            </th>
            <th scope="col" className="font-medium">
              After
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.map((k) => (
            <tr key={k}>
              <th scope="row" className="pr-3 text-left font-mono font-normal">
                {k}
              </th>
              <td className="pr-3 font-mono text-muted-foreground line-through decoration-1">{show(before[k])}</td>
              <td className="font-mono font-semibold text-foreground">{show(after[k])}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

function AuditTable({ events, gone }: { events: readonly AuditEventRow[]; gone: ReadonlySet<string> }) {
  return (
    <TableScroll className="rounded-lg border">
      <table className="w-full text-sm" data-testid="audit-table">
        <caption className="sr-only">Audit events, newest first</caption>
        <thead className="bg-muted/50 text-left text-xs text-muted-foreground">
          <tr>
            <th scope="col" className="px-3 py-2 font-medium">
              Time
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              Actor
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              Action
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              Target
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              Result
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              IP
            </th>
          </tr>
        </thead>
        <tbody>
          {events.map((e) => {
            const href =
              e.target_type && e.target_id && !gone.has(`${e.target_type}:${e.target_id}`)
                ? targetHref(e.target_type, e.target_id)
                : null;
            return (
              <tr key={e.id} className="border-t align-top" data-audit-id={e.id} data-action={e.action}>
                <td className="px-3 py-2 whitespace-nowrap">
                  <time dateTime={e.created_at} title={formatUtc(e.created_at)}>
                    {formatDateTime(e.created_at)}
                  </time>
                </td>
                <td className="px-3 py-2 break-all">
                  {e.actor_email ?? <span className="text-muted-foreground">{e.credential ?? "—"}</span>}
                </td>
                <td className="px-3 py-2">
                  <code className="font-mono text-xs">{e.action}</code>
                  <details className="mt-1 text-xs">
                    <summary className="cursor-pointer text-muted-foreground hover:text-foreground">Details</summary>
                    <dl className="mt-1 grid grid-cols-[auto_1fr] gap-x-3 gap-y-1">
                      <dt className="text-muted-foreground">User agent</dt>
                      <dd className="break-all">{e.user_agent ?? "—"}</dd>
                      <dt className="text-muted-foreground">Credential</dt>
                      <dd>{e.credential ?? "—"}</dd>
                      <dt className="text-muted-foreground">Request</dt>
                      <dd className="font-mono break-all">{e.request_id ?? "—"}</dd>
                    </dl>
                    <div className="mt-2">
                      <Diff data={e.data} />
                    </div>
                    {e.data && !(e.data as { before?: unknown }).before ? (
                      <pre className="mt-1 max-h-48 max-w-md overflow-auto rounded bg-muted p-2 font-mono text-[11px] whitespace-pre-wrap">
                        {JSON.stringify(e.data, null, 2)}
                      </pre>
                    ) : null}
                  </details>
                </td>
                <td className="px-3 py-2">
                  {e.target_id ? (
                    <span className="flex flex-col">
                      <span className="text-xs text-muted-foreground">{e.target_type}</span>
                      {href ? (
                        <Link href={href} className="font-mono text-xs break-all underline-offset-4 hover:underline">
                          {e.target_id}
                        </Link>
                      ) : (
                        <span className="font-mono text-xs break-all">{e.target_id}</span>
                      )}
                    </span>
                  ) : (
                    <span className="text-muted-foreground">{e.target ?? "—"}</span>
                  )}
                </td>
                <td className="px-3 py-2">
                  <ResultBadge result={e.result} />
                </td>
                <td className="px-3 py-2 font-mono text-xs whitespace-nowrap">{e.ip ?? "—"}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableScroll>
  );
}
