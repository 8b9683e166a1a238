import { queryOptions } from "@tanstack/react-query";
import { apiAll, apiJson, apiVoid } from "../api/core";
import { object } from "../api/read";
import { path } from "../orkestr/path";
// Types only: zod stays out of the browser bundle (lib/api/core.ts says why).
import type { Sandbox } from "../orkestr/schemas/sandboxes";
import type { Snapshot } from "../orkestr/schemas/snapshots";
import { SANDBOX_STATUSES } from "../sandbox-status";
import { readSandbox } from "./sandboxes";

// Named snapshots in the browser: the list, one snapshot, the sandboxes forked from it (the fork
// tree), and the calls that take and delete one. Forks themselves are sandbox creates
// (sandboxMutations.create with `snapshot`).

/** How often the fork tree re-reads its children while the page is visible (their live status). */
export const CHILDREN_POLL_MS = 3_000;

export const snapshotKeys = {
  all: ["snapshots"] as const,
  list: () => ["snapshots", "list"] as const,
  detail: (id: string) => ["snapshots", "detail", id] as const,
  children: (id: string) => ["snapshots", "children", id] as const,
};

const readSnapshot = object<Snapshot>({ id: "string" }, { captured_paths: "array", memory_captured: "boolean" });

/**
 * The sandboxes born from `snapshot` (its id), ended ones included, newest first. The engine filters
 * on ?snapshot=; a server without that filter answers with every sandbox, so each one's own
 * `snapshot` field decides, and the tree is right either way.
 */
export async function fetchSnapshotChildren(snapshot: string, signal?: AbortSignal): Promise<Sandbox[]> {
  const all = await apiAll(
    { path: "/api/v1/sandboxes", query: { snapshot, status: SANDBOX_STATUSES.join(",") }, signal },
    readSandbox,
  );
  return all.filter((s) => s.snapshot === snapshot);
}

export const snapshotQueries = {
  /** Every snapshot, newest first (the list page, and the create form's "start from a snapshot" picker). */
  list: () =>
    queryOptions({
      queryKey: snapshotKeys.list(),
      queryFn: ({ signal }) => apiAll({ path: "/api/v1/snapshots", signal }, readSnapshot),
    }),
  /** One snapshot, by id or name. */
  detail: (id: string) =>
    queryOptions({
      queryKey: snapshotKeys.detail(id),
      queryFn: ({ signal }) => apiJson({ path: path`/api/v1/snapshots/${id}`, signal }, readSnapshot),
    }),
  /** The fork tree's children, refreshed while the page is visible. */
  children: (id: string) =>
    queryOptions({
      queryKey: snapshotKeys.children(id),
      queryFn: ({ signal }) => fetchSnapshotChildren(id, signal),
      refetchInterval: CHILDREN_POLL_MS,
    }),
};

export const snapshotMutations = {
  /** POST /api/v1/sandboxes/{id}/snapshots; the key makes a retried request return the first snapshot. */
  create: (sandboxId: string, name: string, idempotencyKey?: string) =>
    apiJson(
      {
        method: "POST",
        path: path`/api/v1/sandboxes/${sandboxId}/snapshots`,
        body: { name },
        headers: idempotencyKey ? { "idempotency-key": idempotencyKey } : undefined,
      },
      readSnapshot,
    ),
  remove: (id: string) => apiVoid({ method: "DELETE", path: path`/api/v1/snapshots/${id}` }),
};
