import { infiniteQueryOptions, keepPreviousData, type InfiniteData, type QueryClient } from "@tanstack/react-query";
// Types only: zod stays out of the browser bundle (its eval probe trips the CSP).
import type { Metrics } from "../orkestr/schemas/metrics";
import type { Sandbox } from "../orkestr/schemas/sandboxes";
import type { SandboxEvent } from "../orkestr/schemas/events";
import { apiFetch, apiFetchPage, type ApiPage } from "./api";
import { sandboxKeys } from "./sandboxes";

// The sandbox list page's data: pages of sandboxes accumulated as the table scrolls (cursor paging),
// and the per-row telemetry reads (metrics, exec events) that the list's scheduler makes for the rows
// on screen. Lifecycle mutations elsewhere invalidate `sandboxKeys.lists()`, which covers these keys.

/** Rows per request: the contract's largest page (§3.0). */
export const LIST_PAGE_SIZE = 100;

const enc = encodeURIComponent;

/** What the server filters (status comma-joined, `metadata[k]=v` pairs, the starting cursor). */
export interface ServerFilters {
  status: string;
  template: string;
  region: string;
  metadata: [string, string][];
  cursor: string;
}

/** GET /api/v1/sandboxes query string for one page. */
export function listApiSearch(filters: ServerFilters, cursor: string | null, limit: number): string {
  const params = new URLSearchParams();
  params.set("limit", String(limit));
  if (filters.status) params.set("status", filters.status);
  if (filters.template) params.set("template", filters.template);
  if (filters.region) params.set("region", filters.region);
  for (const [k, v] of filters.metadata) params.append(`metadata[${k}]`, v);
  if (cursor) params.set("cursor", cursor);
  return `?${params.toString()}`;
}

export type SandboxListData = InfiniteData<ApiPage<Sandbox>, string | null>;

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
      apiFetchPage<Sandbox>(`/api/v1/sandboxes${listApiSearch(filters, pageParam, LIST_PAGE_SIZE)}`, { signal }),
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

/** GET /api/v1/sandboxes/{id}/metrics, with `since` in unix seconds. */
export function fetchSandboxMetrics(id: string, sinceUnixSeconds: number, signal?: AbortSignal): Promise<Metrics> {
  return apiFetch<Metrics>(`/api/v1/sandboxes/${enc(id)}/metrics?since=${sinceUnixSeconds.toFixed(3)}`, { signal });
}

/** One page of a sandbox's exec events (oldest first), after `cursor`. */
export function fetchExecEvents(
  id: string,
  cursor: string | null,
  signal?: AbortSignal,
): Promise<ApiPage<SandboxEvent>> {
  const params = new URLSearchParams({ type: "exec,exec.stream", limit: "500" });
  if (cursor) params.set("cursor", cursor);
  return apiFetchPage<SandboxEvent>(`/api/v1/sandboxes/${enc(id)}/events?${params.toString()}`, { signal });
}

/** GET /api/v1/sandboxes/{id}: the search box's "open this id" check. */
export function fetchSandbox(id: string, signal?: AbortSignal): Promise<Sandbox> {
  return apiFetch<Sandbox>(`/api/v1/sandboxes/${enc(id)}`, { signal });
}
