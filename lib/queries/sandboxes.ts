import { queryOptions } from "@tanstack/react-query";
import { apiJson, apiPage, apiVoid } from "../api/core";
import { object } from "../api/read";
import { path } from "../orkestr/path";
// Types only: zod stays out of the browser bundle (lib/api/core.ts says why).
import type { Limits } from "../orkestr/schemas/limits";
import type { Metrics } from "../orkestr/schemas/metrics";
import type { CreateSandboxBody, Sandbox, SetTimeoutResult } from "../orkestr/schemas/sandboxes";

// The sandboxes resource in the browser: one key factory (every sandbox-scoped key, files, previews,
// events and terminals included, starts with "sandboxes", so invalidating `sandboxKeys.all` refreshes
// them all), the queries, and the calls that change a sandbox. The lifecycle hook that wraps those
// calls for the UI is ./sandbox-lifecycle.ts.

/** How often the detail page re-reads the sandbox itself (status, expires_at). */
export const DETAIL_POLL_MS = 5_000;

export const sandboxKeys = {
  all: ["sandboxes"] as const,
  lists: () => ["sandboxes", "list"] as const,
  list: (query: Record<string, string | string[] | undefined>) => ["sandboxes", "list", query] as const,
  detail: (id: string) => ["sandboxes", "detail", id] as const,
  metrics: (id: string) => ["sandboxes", "metrics", id] as const,
  limits: () => ["sandboxes", "limits"] as const,
};

/** What the UI needs of every sandbox: the rest passes through as the server parsed it. */
export const readSandbox = object<Sandbox>({ id: "string", status: "string" }, { metadata: "object" });
const readMetrics = object<Metrics>({}, { samples: "array" });
const readLimits = object<Limits>();
const readTimeout = object<SetTimeoutResult>();

const one = (id: string) => path`/api/v1/sandboxes/${id}`;

/** GET /api/v1/sandboxes/{id}. */
export function fetchSandbox(id: string, signal?: AbortSignal): Promise<Sandbox> {
  return apiJson({ path: one(id), signal }, readSandbox);
}

/** GET /api/v1/sandboxes/{id}/metrics; `since` is RFC 3339 or unix seconds. */
export function fetchSandboxMetrics(id: string, since?: string | number, signal?: AbortSignal): Promise<Metrics> {
  return apiJson({ path: path`/api/v1/sandboxes/${id}/metrics`, query: { since }, signal }, readMetrics);
}

export const sandboxQueries = {
  /** One page of sandboxes; `cursor` in the query asks for the next one. */
  list: (query: Record<string, string | string[] | undefined> = {}) =>
    queryOptions({
      queryKey: sandboxKeys.list(query),
      queryFn: ({ signal }) => apiPage({ path: "/api/v1/sandboxes", query, signal }, readSandbox),
    }),
  detail: (id: string) =>
    queryOptions({
      queryKey: sandboxKeys.detail(id),
      queryFn: ({ signal }) => fetchSandbox(id, signal),
    }),
  /** Samples since `since` (RFC 3339 or unix seconds) and the lifetime totals. */
  metrics: (id: string, since?: string) =>
    queryOptions({
      queryKey: [...sandboxKeys.metrics(id), since ?? null] as const,
      queryFn: ({ signal }) => fetchSandboxMetrics(id, since, signal),
    }),
  /** Plan, sizes, regions, templates allowed: changes rarely. */
  limits: () =>
    queryOptions({
      queryKey: sandboxKeys.limits(),
      queryFn: ({ signal }) => apiJson({ path: "/api/v1/sandboxes/limits", signal }, readLimits),
      staleTime: 5 * 60_000,
    }),
};

/** The fields of PATCH /api/v1/sandboxes/{id} the console edits. */
export interface SandboxPatch {
  metadata?: Record<string, string>;
  auto_resume?: boolean;
  on_timeout?: "kill" | "pause";
}

export const sandboxMutations = {
  /** `idempotencyKey` makes a retried create (after a timeout) return the first sandbox, not a second. */
  create: (body: CreateSandboxBody, idempotencyKey?: string) =>
    apiJson(
      {
        method: "POST",
        path: "/api/v1/sandboxes",
        body,
        headers: idempotencyKey ? { "idempotency-key": idempotencyKey } : undefined,
      },
      readSandbox,
    ),
  /** A pause/resume answer may be the whole sandbox (200) or nothing (202): undefined then. */
  pause: (id: string) => apiJson({ method: "POST", path: path`/api/v1/sandboxes/${id}/pause` }, maybeSandbox),
  resume: (id: string) => apiJson({ method: "POST", path: path`/api/v1/sandboxes/${id}/resume` }, maybeSandbox),
  terminate: (id: string) => apiVoid({ method: "DELETE", path: one(id) }),
  setTimeout: (id: string, timeoutSeconds: number) =>
    apiJson(
      { method: "POST", path: path`/api/v1/sandboxes/${id}/timeout`, body: { timeout_seconds: timeoutSeconds } },
      readTimeout,
    ),
  update: (id: string, body: SandboxPatch) => apiJson({ method: "PATCH", path: one(id), body }, readSandbox),
};

function maybeSandbox(value: unknown): Sandbox | undefined {
  return value === undefined || value === null ? undefined : readSandbox(value);
}
