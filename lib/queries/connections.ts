import { queryOptions } from "@tanstack/react-query";
// Types only: zod stays out of the browser bundle (its eval probe trips the CSP).
import type { ConnectionDto, ConnectionListDto, ConnectionStatusDto } from "../validations/connections";
import { apiFetch } from "./api";

// TanStack Query factories for Baton's /api/connections (architecture convention 7). Every
// mutation invalidates the ["connections"] prefix, which refreshes the list and the header status.

/** How often the header's status indicator asks GET /api/connections/status again. */
export const CONNECTION_STATUS_POLL_MS = 30_000;

export const connectionKeys = {
  all: ["connections"] as const,
  list: () => ["connections", "list"] as const,
  status: () => ["connections", "status"] as const,
};

export const connectionQueries = {
  list: () =>
    queryOptions({
      queryKey: connectionKeys.list(),
      queryFn: ({ signal }) => apiFetch<ConnectionListDto>("/api/connections", { signal }),
    }),
  status: () =>
    queryOptions({
      queryKey: connectionKeys.status(),
      queryFn: ({ signal }) => apiFetch<ConnectionStatusDto>("/api/connections/status", { signal }),
      refetchInterval: CONNECTION_STATUS_POLL_MS,
      staleTime: CONNECTION_STATUS_POLL_MS,
    }),
};

export const connectionMutations = {
  create: (body: { name: string; base_url: string; token: string }) =>
    apiFetch<{ connection: ConnectionDto }>("/api/connections", { method: "POST", body }),
  localEngine: () => apiFetch<{ connection: ConnectionDto }>("/api/connections/local-engine", { method: "POST" }),
  replaceToken: (id: string, token: string) =>
    apiFetch<{ connection: ConnectionDto }>(`/api/connections/${encodeURIComponent(id)}`, {
      method: "PATCH",
      body: { token },
    }),
  activate: (id: string) =>
    apiFetch<{ connection: ConnectionDto }>(`/api/connections/${encodeURIComponent(id)}`, {
      method: "PATCH",
      body: { active: true },
    }),
  remove: (id: string) =>
    apiFetch<{ active: ConnectionDto | null }>(`/api/connections/${encodeURIComponent(id)}`, { method: "DELETE" }),
};
