import { queryOptions } from "@tanstack/react-query";
// Types only: zod stays out of the browser bundle (its eval probe trips the CSP).
import type { Limits } from "../orkestr/schemas/limits";
import type { Metrics } from "../orkestr/schemas/metrics";
import type { CreateSandboxBody, Sandbox, SetTimeoutResult } from "../orkestr/schemas/sandboxes";
import { apiFetch, apiFetchPage, type ApiPage } from "./api";

// TanStack Query factories for the browser's sandbox data, all through Baton's /api/v1 proxy
// (never orkestr directly). Feature code adds its own queries beside these; the keys below are the
// shared prefixes that lifecycle mutations invalidate.

const enc = encodeURIComponent;

export const sandboxKeys = {
  all: ["sandboxes"] as const,
  lists: () => ["sandboxes", "list"] as const,
  list: (query: Record<string, string | string[] | undefined>) => ["sandboxes", "list", query] as const,
  detail: (id: string) => ["sandboxes", "detail", id] as const,
  metrics: (id: string) => ["sandboxes", "metrics", id] as const,
  limits: () => ["sandboxes", "limits"] as const,
};

/** `?k=v&k=v2` from a query object; undefined and empty values are left out. */
export function toSearch(query: Record<string, string | string[] | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === "") continue;
    for (const one of Array.isArray(v) ? v : [v]) if (one !== "") params.append(k, one);
  }
  const s = params.toString();
  return s ? `?${s}` : "";
}

export const sandboxQueries = {
  /** One page of sandboxes; `cursor` in the query asks for the next one. */
  list: (query: Record<string, string | string[] | undefined> = {}) =>
    queryOptions({
      queryKey: sandboxKeys.list(query),
      queryFn: ({ signal }): Promise<ApiPage<Sandbox>> =>
        apiFetchPage<Sandbox>(`/api/v1/sandboxes${toSearch(query)}`, { signal }),
    }),
  detail: (id: string) =>
    queryOptions({
      queryKey: sandboxKeys.detail(id),
      queryFn: ({ signal }) => apiFetch<Sandbox>(`/api/v1/sandboxes/${enc(id)}`, { signal }),
    }),
  /** Samples since `since` (RFC 3339 or unix seconds) and the lifetime totals. */
  metrics: (id: string, since?: string) =>
    queryOptions({
      queryKey: [...sandboxKeys.metrics(id), since ?? null] as const,
      queryFn: ({ signal }) =>
        apiFetch<Metrics>(`/api/v1/sandboxes/${enc(id)}/metrics${since ? `?since=${enc(since)}` : ""}`, { signal }),
    }),
  /** Plan, sizes, regions, templates allowed: changes rarely. */
  limits: () =>
    queryOptions({
      queryKey: sandboxKeys.limits(),
      queryFn: ({ signal }) => apiFetch<Limits>("/api/v1/sandboxes/limits", { signal }),
      staleTime: 5 * 60_000,
    }),
};

export const sandboxMutations = {
  /** `idempotencyKey` makes a retried create (after a timeout) return the first sandbox, not a second. */
  create: (body: CreateSandboxBody, idempotencyKey?: string) =>
    apiFetch<Sandbox>("/api/v1/sandboxes", {
      method: "POST",
      body,
      headers: idempotencyKey ? { "idempotency-key": idempotencyKey } : undefined,
    }),
  pause: (id: string) => apiFetch<Sandbox>(`/api/v1/sandboxes/${enc(id)}/pause`, { method: "POST" }),
  resume: (id: string) => apiFetch<Sandbox>(`/api/v1/sandboxes/${enc(id)}/resume`, { method: "POST" }),
  terminate: (id: string) => apiFetch<void>(`/api/v1/sandboxes/${enc(id)}`, { method: "DELETE" }),
  setTimeout: (id: string, timeoutSeconds: number) =>
    apiFetch<SetTimeoutResult>(`/api/v1/sandboxes/${enc(id)}/timeout`, {
      method: "POST",
      body: { timeout_seconds: timeoutSeconds },
    }),
  update: (id: string, body: { metadata?: Record<string, string> }) =>
    apiFetch<Sandbox>(`/api/v1/sandboxes/${enc(id)}`, { method: "PATCH", body }),
};
