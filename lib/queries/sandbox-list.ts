import { infiniteQueryOptions, keepPreviousData, type InfiniteData, type QueryClient } from "@tanstack/react-query";
import { apiPage } from "../api/core";
import type { Query } from "../orkestr/path";
// Types only: zod stays out of the browser bundle (lib/api/core.ts says why).
import type { Page } from "../orkestr/schemas/common";
import type { Sandbox } from "../orkestr/schemas/sandboxes";
import { readSandbox, sandboxKeys } from "./sandboxes";

// The sandbox list page's data: pages of sandboxes accumulated as the table scrolls (cursor paging),
// and the per-row telemetry reads (metrics, exec events) that the list's scheduler makes for the rows
// on screen. Lifecycle mutations elsewhere invalidate `sandboxKeys.lists()`, which covers these keys.

/** Rows per request: the contract's largest page (`?limit=` is 1-100 on every list route). */
export const LIST_PAGE_SIZE = 100;

/** What the server filters (status comma-joined, `metadata[k]=v` pairs, the starting cursor). */
export interface ServerFilters {
  status: string;
  template: string;
  region: string;
  metadata: [string, string][];
  cursor: string;
}

/** GET /api/v1/sandboxes query for one page (status comma-joined, `metadata[k]=v` pairs). */
export function listApiQuery(filters: ServerFilters, cursor: string | null, limit: number): Query {
  const query: Query = {
    limit,
    status: filters.status || undefined,
    template: filters.template || undefined,
    region: filters.region || undefined,
  };
  for (const [k, v] of filters.metadata) query[`metadata[${k}]`] = v;
  query.cursor = cursor ?? undefined;
  return query;
}

export type SandboxListData = InfiniteData<Page<Sandbox>, string | null>;

export const sandboxListKey = (filters: ServerFilters) =>
  [...sandboxKeys.lists(), { view: "table", ...filters }] as const;

/**
 * The list, page after page. `placeholderData: keepPreviousData` keeps the old rows on screen while a
 * new filter loads (no flash of a spinner), and refetches replace rows in place, so nothing flickers.
 */
export const sandboxListQuery = (filters: ServerFilters) =>
  infiniteQueryOptions({
    queryKey: sandboxListKey(filters),
    queryFn: ({ pageParam, signal }) =>
      apiPage(
        { path: "/api/v1/sandboxes", query: listApiQuery(filters, pageParam, LIST_PAGE_SIZE), signal },
        readSandbox,
      ),
    initialPageParam: (filters.cursor || null) as string | null,
    getNextPageParam: (last) => last.nextCursor,
    placeholderData: keepPreviousData,
    staleTime: 2_000,
  });

/**
 * How often the loaded pages are refreshed: TanStack refetches every loaded page in turn, so the more
 * pages are loaded the slower the refresh, and beyond 20 pages (2,000 rows) only on demand.
 */
export function listRefreshIntervalMs(pagesLoaded: number): number | false {
  if (pagesLoaded <= 1) return 5_000;
  if (pagesLoaded <= 5) return 15_000;
  if (pagesLoaded <= 20) return 60_000;
  return false;
}

/** Replaces (or with `null` removes) sandboxes in every cached list page; returns the previous data for rollback. */
export function patchListedSandboxes(queryClient: QueryClient, patch: (s: Sandbox) => Sandbox | null) {
  const previous = queryClient.getQueriesData<SandboxListData>({ queryKey: sandboxKeys.lists() });
  queryClient.setQueriesData<SandboxListData>({ queryKey: sandboxKeys.lists() }, (data) => {
    // Only this page's infinite lists: other list shapes under the same prefix are left alone.
    if (!data || !Array.isArray((data as Partial<SandboxListData>).pages)) return data;
    return {
      ...data,
      pages: data.pages.map((page) => ({ ...page, items: page.items.flatMap((s) => patch(s) ?? []) })),
    };
  });
  return previous;
}
