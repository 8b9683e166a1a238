import { queryOptions } from "@tanstack/react-query";
import { apiJson } from "../api/core";
import { object } from "../api/read";
import { path } from "../orkestr/path";
// Types only: zod stays out of the browser bundle (lib/api/core.ts says why).
import type { ConnectionDto, ConnectionListDto, ConnectionStatusDto } from "../validations/connections";

// TanStack Query factories for Baton's /api/connections. Every
// mutation invalidates the ["connections"] prefix, which refreshes the list and the header status.

/** How often the header's status indicator asks GET /api/connections/status again. */
export const CONNECTION_STATUS_POLL_MS = 30_000;

export const connectionKeys = {
  all: ["connections"] as const,
  list: () => ["connections", "list"] as const,
  status: () => ["connections", "status"] as const,
};

const readList = object<ConnectionListDto>({ connections: "array", local_engine: "object" });
const readStatus = object<ConnectionStatusDto>({ state: "string" }, { connection: "object" });
const readOne = object<{ connection: ConnectionDto }>({ connection: "object" });
const readRemoved = object<{ active: ConnectionDto | null }>({}, { active: "object" });
const one = (id: string) => path`/api/connections/${id}`;

export const connectionQueries = {
  list: () =>
    queryOptions({
      queryKey: connectionKeys.list(),
      queryFn: ({ signal }) => apiJson({ path: "/api/connections", signal }, readList),
    }),
  status: () =>
    queryOptions({
      queryKey: connectionKeys.status(),
      queryFn: ({ signal }) => apiJson({ path: "/api/connections/status", signal }, readStatus),
      refetchInterval: CONNECTION_STATUS_POLL_MS,
      staleTime: CONNECTION_STATUS_POLL_MS,
    }),
};

export const connectionMutations = {
  create: (body: { name: string; base_url: string; token: string }) =>
    apiJson({ method: "POST", path: "/api/connections", body }, readOne),
  localEngine: () => apiJson({ method: "POST", path: "/api/connections/local-engine" }, readOne),
  replaceToken: (id: string, token: string) => apiJson({ method: "PATCH", path: one(id), body: { token } }, readOne),
  activate: (id: string) => apiJson({ method: "PATCH", path: one(id), body: { active: true } }, readOne),
  remove: (id: string) => apiJson({ method: "DELETE", path: one(id) }, readRemoved),
};
