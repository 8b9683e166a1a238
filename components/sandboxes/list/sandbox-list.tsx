"use client";

import { QueryError } from "../../layout/query-error";
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import dynamic from "next/dynamic";
import { usePathname, useSearchParams } from "next/navigation";
import { useCallback, useDeferredValue, useEffect, useMemo, useRef, useState } from "react";
import { errorText } from "../../../lib/orkestr/errors";
import type { Sandbox } from "../../../lib/orkestr/schemas/sandboxes";
import { listRefreshIntervalMs, sandboxListKey, sandboxListQuery } from "../../../lib/queries/sandbox-list";
import { fetchSandbox, sandboxQueries } from "../../../lib/queries/sandboxes";
import { templateQueries } from "../../../lib/queries/templates";
import { Alert, AlertDescription, AlertTitle } from "../../ui/alert";
import { Button } from "../../ui/button";
import { Skeleton } from "../../ui/skeleton";
import { plural } from "./bulk";
import { ListFilters } from "./list-filters";
import {
  EMPTY_LIST_STATE,
  isFiltered,
  listStateToSearch,
  parseListState,
  serverFilters,
  type ListState,
} from "./list-state";
import type { TelemetryStore } from "./row-telemetry";
import { SandboxTable } from "./sandbox-table";
import { TelemetryContext } from "./telemetry-cells";
import { sandboxHref } from "../../../lib/links";
import { usePermissions } from "../../layout/permissions";
import { hasPermission } from "../../../lib/permissions";
import { TeamLink as Link, useTeamRouter } from "../../layout/team-link";

// Split out of the page's first load (the /sandboxes budget is 180 KiB gzipped): the bulk bar only
// matters once rows are selected, the teaching empty state only for a user with no sandboxes.
// Both chunks start loading as soon as the list renders.
const BulkActions = dynamic(() => import("./bulk-actions").then((m) => m.BulkActions), { ssr: false });
// Fault notices (./list-notices.tsx): only a page whose list is failing or slow needs their code.
const ListNotices = dynamic(() => import("./list-notices").then((m) => m.ListNotices), { ssr: false });
const TeachingEmptyState = dynamic(() => import("./teaching-empty-state").then((m) => m.TeachingEmptyState), {
  ssr: false,
  loading: () => <Skeleton className="h-64 w-full" />,
});

/** The search box writes the URL this long after the last keystroke (replaceState: no history spam). */
const SEARCH_URL_DELAY_MS = 300;

/**
 * The sandbox list: URL-driven filters, pages loaded as the table scrolls, live refresh, live
 * telemetry for the rows on screen, bulk actions, and the empty, loading and error states.
 */
export function SandboxList({
  members = {},
  tokens = {},
}: {
  /** The team's members (user id → name), from the server: the names in "Created · by" and the creator chip. */
  members?: Readonly<Record<string, string>>;
  /** The team's API tokens (id → name), from the server: "via API token <name>" in "Created · by". */
  tokens?: Readonly<Record<string, string>>;
} = {}) {
  const searchParams = useSearchParams();
  const access = usePermissions();
  const userId = access.userId;
  // Selection serves the bulk actions only: a role that may not change sandboxes gets neither.
  const canChange = hasPermission(access, "sandboxes.write");
  const pathname = usePathname();
  const state = useMemo(() => parseListState(searchParams), [searchParams]);
  const filtersKey = JSON.stringify(serverFilters(state));
  // eslint-disable-next-line react-hooks/exhaustive-deps -- keyed by value, not by the object's identity
  const filters = useMemo(() => serverFilters(state), [filtersKey]);

  const navigate = useCallback(
    (next: ListState, mode: "push" | "replace" = "push") => {
      // The History API: Next keeps useSearchParams in step without a server round trip.
      const url = `${pathname}${listStateToSearch(next)}`;
      if (mode === "push") window.history.pushState(null, "", url);
      else window.history.replaceState(null, "", url);
    },
    [pathname],
  );

  // Search text is local for instant typing; the filter uses a deferred copy, the URL a debounced one.
  const [search, setSearch] = useState(state.q);
  const [urlQ, setUrlQ] = useState(state.q);
  if (urlQ !== state.q) {
    // Back/Forward changed ?q=: follow it (adjusting state during render, not in an effect).
    setUrlQ(state.q);
    setSearch(state.q);
  }
  const deferredSearch = useDeferredValue(search);
  const stateRef = useRef(state);
  useEffect(() => {
    stateRef.current = state;
  }, [state]);
  useEffect(() => {
    if (search === stateRef.current.q) return;
    const t = setTimeout(() => {
      setUrlQ(search);
      navigate({ ...stateRef.current, q: search }, "replace");
    }, SEARCH_URL_DELAY_MS);
    return () => clearTimeout(t);
  }, [search, navigate]);

  const list = useInfiniteQuery({
    ...sandboxListQuery(filters),
    refetchInterval: (query) => listRefreshIntervalMs(query.state.data?.pages.length ?? 0),
  });
  const pagesLoaded = list.data?.pages.length ?? 0;
  const allRows = useMemo(() => {
    // Pages can shift between refreshes (new sandboxes at the top): keep each id once.
    const seen = new Set<string>();
    const out: Sandbox[] = [];
    for (const page of list.data?.pages ?? []) {
      for (const s of page.items) {
        if (seen.has(s.id)) continue;
        seen.add(s.id);
        out.push(s);
      }
    }
    return out;
  }, [list.data]);
  const needle = deferredSearch.trim().toLowerCase();
  const rows = useMemo(
    () => (needle ? allRows.filter((s) => s.id.toLowerCase().includes(needle)) : allRows),
    [allRows, needle],
  );

  const limits = useQuery(sandboxQueries.limits());
  const templatesQuery = useQuery(templateQueries.list({ include_builtin: true }));
  const templates = useMemo(() => {
    const names = new Set<string>();
    for (const t of templatesQuery.data ?? [])
      if (t.status === undefined || t.status === null || t.status === "ready") names.add(t.id);
    for (const s of allRows.slice(0, 500)) if (s.template) names.add(s.template);
    return [...names].sort();
  }, [templatesQuery.data, allRows]);
  const regions = limits.data?.regions ?? [];

  // The telemetry sampler (metrics and exec-event polling of the rows on screen, ~1.5 KiB gz) loads
  // after first paint: its cells show "…" until it has a reading, as they do while it waits for one.
  const [telemetry, setTelemetry] = useState<TelemetryStore | null>(null);
  useEffect(() => {
    let store: TelemetryStore | null = null;
    let cancelled = false;
    void import("./row-telemetry").then((m) => {
      if (cancelled) return;
      store = new m.TelemetryStore();
      store.start();
      setTelemetry(store);
    });
    return () => {
      cancelled = true;
      store?.stop();
    };
  }, []);

  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const selectedRows = useMemo(() => allRows.filter((s) => selected.has(s.id)), [allRows, selected]);
  const toggle = useCallback((id: string, on: boolean) => {
    setSelected((prev) => {
      const next = new Set(prev);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  }, []);
  const toggleAll = useCallback((on: boolean) => setSelected(on ? new Set(rows.map((r) => r.id)) : new Set()), [rows]);

  const { hasNextPage, isFetchingNextPage, fetchNextPage } = list;
  const loadMore = useCallback(() => {
    if (hasNextPage && !isFetchingNextPage) void fetchNextPage();
  }, [hasNextPage, isFetchingNextPage, fetchNextPage]);

  const searchRef = useRef<HTMLInputElement>(null);
  useEffect(() => {
    // "/" focuses the search box (listed in the shortcuts dialog), unless typing somewhere already.
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "/" || e.metaKey || e.ctrlKey || e.altKey) return;
      const el = e.target as HTMLElement | null;
      if (el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName))) return;
      e.preventDefault();
      searchRef.current?.focus();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);

  const lastPage = list.data?.pages[list.data.pages.length - 1];
  const nextPageHref = lastPage?.nextCursor
    ? `${pathname}${listStateToSearch({ ...state, q: "", cursor: lastPage.nextCursor })}`
    : null;
  const refresh = listRefreshIntervalMs(pagesLoaded);
  // Nothing at all yet (not "nothing matches"): the page teaches instead of showing empty filters.
  const nothingYet = !list.isPending && !list.isError && allRows.length === 0 && !isFiltered(state) && !hasNextPage;

  return (
    <TelemetryContext.Provider value={telemetry}>
      <div className="flex flex-col gap-4">
        {nothingYet ? null : (
          <ListFilters
            state={state}
            onChange={(next) => {
              setSelected(new Set());
              navigate(next);
            }}
            search={search}
            onSearch={setSearch}
            searchRef={searchRef}
            templates={templates}
            regions={regions}
            creatorLabel={
              !state.creator
                ? null
                : state.creator === userId
                  ? "you"
                  : Object.hasOwn(members, state.creator)
                    ? members[state.creator]!
                    : null
            }
            viewerId={userId ?? null}
          />
        )}

        {state.cursor ? (
          <Alert role="status">
            <AlertDescription className="flex flex-wrap items-center justify-between gap-2">
              <span>This view starts at a later page of the list, not at the newest sandbox.</span>
              <Button size="sm" variant="outline" onClick={() => navigate({ ...state, cursor: "" })}>
                Show from the newest
              </Button>
            </AlertDescription>
          </Alert>
        ) : null}

        {canChange ? (
          <BulkActions
            selected={selectedRows}
            onClear={() => setSelected(new Set())}
            onSettled={(failed) => setSelected(new Set(failed))}
          />
        ) : null}

        {list.failureCount > 0 || (list.isPending && list.isFetching) ? (
          <ListNotices list={list} queryKey={sandboxListKey(filters)} />
        ) : null}

        {list.isError && list.data ? (
          <Alert variant="warning" role="status">
            <AlertTitle>Refreshing the list failed</AlertTitle>
            <AlertDescription>
              {errorDetail(list.error)} The rows below are from the last successful refresh.
            </AlertDescription>
          </Alert>
        ) : null}

        {list.isPending ? (
          <ListSkeleton />
        ) : list.isError && !list.data ? (
          <QueryError
            title="Could not load your sandboxes"
            error={list.error}
            fallback="The list could not be loaded."
            onRetry={() => void list.refetch()}
          />
        ) : nothingYet ? (
          <TeachingEmptyState />
        ) : rows.length === 0 && !list.isPlaceholderData ? (
          <NoMatch
            search={needle ? search.trim() : ""}
            filtered={isFiltered({ ...state, q: "" })}
            onClear={() => (setSearch(""), navigate({ ...EMPTY_LIST_STATE }))}
            hasMore={!!hasNextPage}
            onLoadMore={loadMore}
          />
        ) : (
          <div
            className={list.isPlaceholderData ? "opacity-60 transition-opacity" : "transition-opacity"}
            aria-busy={list.isPlaceholderData || undefined}
          >
            <SandboxTable
              rows={rows}
              selected={selected}
              onToggle={toggle}
              onToggleAll={toggleAll}
              selectable={canChange}
              telemetry={telemetry}
              canLoadMore={!!hasNextPage && !list.isPlaceholderData}
              onLoadMore={loadMore}
              viewerId={userId ?? null}
              members={members}
              tokens={tokens}
            />
          </div>
        )}

        {list.data && allRows.length > 0 ? (
          <div className="flex flex-wrap items-center gap-x-4 gap-y-2 text-sm text-muted-foreground">
            <p role="status" aria-live="polite" data-testid="list-count">
              {needle
                ? `${rows.length} of ${plural(allRows.length, "loaded sandbox", "loaded sandboxes")} match “${search.trim()}”`
                : plural(allRows.length, "sandbox", "sandboxes")}
              {hasNextPage ? " loaded so far" : allRows.length > 0 ? ", all loaded" : ""}
              {isFetchingNextPage ? " · loading more…" : ""}
            </p>
            {hasNextPage ? (
              <Button size="sm" variant="outline" onClick={loadMore} disabled={isFetchingNextPage}>
                Load more
              </Button>
            ) : null}
            {nextPageHref ? (
              <Link
                href={nextPageHref}
                className="text-primary underline-offset-4 hover:underline"
                onClick={(e) => (e.preventDefault(), navigate({ ...state, q: "", cursor: lastPage!.nextCursor! }))}
              >
                Link to the next page
              </Link>
            ) : null}
            <span className="ml-auto flex items-center gap-2">
              {refresh === false
                ? "Live refresh is off with this many rows loaded."
                : `Refreshes every ${refresh / 1000} s.`}
              <Button size="sm" variant="ghost" onClick={() => void list.refetch()} disabled={list.isFetching}>
                {list.isFetching && !isFetchingNextPage ? "Refreshing…" : "Refresh now"}
              </Button>
            </span>
          </div>
        ) : null}
      </div>
    </TelemetryContext.Provider>
  );
}

function errorDetail(error: unknown): string {
  return errorText(error, "The list could not be loaded.");
}

function NoMatch({
  search,
  filtered,
  onClear,
  hasMore,
  onLoadMore,
}: {
  search: string;
  filtered: boolean;
  onClear: () => void;
  hasMore: boolean;
  onLoadMore: () => void;
}) {
  const router = useTeamRouter();
  const [checking, setChecking] = useState(false);
  const [notFound, setNotFound] = useState<string | null>(null);
  const looksLikeId = /^[a-z]+_[A-Za-z0-9]{6,}$/.test(search);
  const open = async () => {
    setChecking(true);
    setNotFound(null);
    try {
      const s = await fetchSandbox(search);
      router.push(sandboxHref(s.id));
    } catch (err) {
      setNotFound(errorText(err, "Could not look the id up."));
    } finally {
      setChecking(false);
    }
  };
  return (
    <section className="flex flex-col items-center gap-3 rounded-lg border border-dashed border-input px-6 py-12 text-center">
      <h2 className="text-base font-semibold">No sandboxes match</h2>
      <p className="max-w-md text-sm text-muted-foreground">
        {search ? `No loaded sandbox has an id containing “${search}”.` : "Nothing matches these filters."}
        {hasMore ? " More sandboxes exist beyond the ones loaded." : ""}
      </p>
      <div className="flex flex-wrap justify-center gap-2">
        {looksLikeId ? (
          <Button size="sm" onClick={() => void open()} disabled={checking}>
            {checking ? "Looking…" : `Open ${search}`}
          </Button>
        ) : null}
        {hasMore ? (
          <Button size="sm" variant="outline" onClick={onLoadMore}>
            Load more
          </Button>
        ) : null}
        {filtered || search ? (
          <Button size="sm" variant="outline" onClick={onClear}>
            Clear search and filters
          </Button>
        ) : null}
      </div>
      {notFound ? (
        <p role="alert" className="text-sm text-destructive">
          {notFound}
        </p>
      ) : null}
    </section>
  );
}

function ListSkeleton() {
  return (
    <div className="flex flex-col gap-2 rounded-lg border p-3" role="status" aria-label="Loading sandboxes">
      {Array.from({ length: 6 }, (_, i) => (
        <Skeleton key={i} className="h-8 w-full" />
      ))}
    </div>
  );
}
