import { queryOptions } from "@tanstack/react-query";
// Types only: zod stays out of the browser bundle (its eval probe trips the CSP).
import type { SandboxEvent } from "../orkestr/schemas/events";
import type { Snapshot } from "../orkestr/schemas/snapshots";
import type { BaseImage, Template } from "../orkestr/schemas/templates";
import type { Volume } from "../orkestr/schemas/volumes";
import { apiFetchPage, apiFetch, type ApiPage } from "./api";

// Queries of the create form (its option lists) and of the detail page (the activity timeline),
// beside the shared sandbox queries in ./sandboxes.ts. All through Baton's /api/v1 proxy.

const enc = encodeURIComponent;

/** How often the detail page re-reads the sandbox itself (status, expires_at). */
export const DETAIL_POLL_MS = 5_000;
/** How often the timeline re-reads its first pages when the live stream is not available. */
export const EVENTS_POLL_MS = 5_000;
/** Most events the timeline keeps in memory (newest kept). */
export const EVENTS_MAX = 2_000;

export const createOptionKeys = {
  baseImages: () => ["create-options", "base-images"] as const,
  templates: () => ["create-options", "templates"] as const,
  volumes: () => ["create-options", "volumes"] as const,
  snapshots: () => ["create-options", "snapshots"] as const,
};

/** Every page of a list route (bounded: the option lists are small, 10 pages of 100 is plenty). */
async function allPages<T>(url: string, signal: AbortSignal): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 10; i++) {
    const sep = url.includes("?") ? "&" : "?";
    const page: ApiPage<T> = await apiFetchPage<T>(`${url}${sep}limit=100${cursor ? `&cursor=${enc(cursor)}` : ""}`, {
      signal,
    });
    items.push(...page.items);
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  return items;
}

export const createOptionQueries = {
  /** The built-in images (GET /v1/base-images): ids, descriptions, whether this server can run them. */
  baseImages: () =>
    queryOptions({
      queryKey: createOptionKeys.baseImages(),
      queryFn: ({ signal }) =>
        apiFetch<BaseImage[]>("/api/v1/base-images", { signal }).then((l) => (Array.isArray(l) ? l : [])),
      staleTime: 5 * 60_000,
    }),
  /**
   * Templates, built-ins included (`?include_builtin=true`): custom ones come from here, and the
   * built-ins too when a server has no /base-images route.
   */
  templates: () =>
    queryOptions({
      queryKey: createOptionKeys.templates(),
      queryFn: ({ signal }) => allPages<Template>("/api/v1/templates?include_builtin=true", signal),
    }),
  volumes: () =>
    queryOptions({
      queryKey: createOptionKeys.volumes(),
      queryFn: ({ signal }) => allPages<Volume>("/api/v1/volumes", signal),
    }),
  snapshots: () =>
    queryOptions({
      queryKey: createOptionKeys.snapshots(),
      queryFn: ({ signal }) => allPages<Snapshot>("/api/v1/snapshots", signal),
    }),
};

export const sandboxEventKeys = {
  all: (id: string) => ["sandboxes", "events", id] as const,
};

/** The timeline from the start (oldest first, as the API pages it), bounded to EVENTS_MAX. */
export function fetchAllEvents(id: string, signal?: AbortSignal): Promise<SandboxEvent[]> {
  return (async () => {
    const items: SandboxEvent[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 20; i++) {
      const page: ApiPage<SandboxEvent> = await apiFetchPage<SandboxEvent>(
        `/api/v1/sandboxes/${enc(id)}/events?limit=100${cursor ? `&cursor=${enc(cursor)}` : ""}`,
        { signal },
      );
      items.push(...page.items);
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    return items.slice(-EVENTS_MAX);
  })();
}

/** The URL of the live timeline (SSE through the proxy route, which resumes after `cursor`). */
export function eventsFollowUrl(id: string, cursor?: string | null): string {
  return `/api/v1/sandboxes/${enc(id)}/events?follow=true${cursor ? `&cursor=${enc(cursor)}` : ""}`;
}
