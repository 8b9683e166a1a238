import { queryOptions } from "@tanstack/react-query";
import { apiAll, apiJson, apiVoid } from "../api/core";
import { object } from "../api/read";
import { path } from "../orkestr/path";
// Types only: zod stays out of the browser bundle (lib/api/core.ts says why).
import type { CreateVolumeBody, UpdateVolumeBody, Volume } from "../orkestr/schemas/volumes";

// The volumes resource in the browser: one key factory, the queries (the /volumes page and the
// create form's picker share the list), and the calls that change a volume.

export const volumeKeys = {
  all: ["volumes"] as const,
  list: () => ["volumes", "list"] as const,
  detail: (id: string) => ["volumes", "detail", id] as const,
};

const readVolume = object<Volume>({ id: "string" });

/** How often the list is re-read while a volume is on its way somewhere (creating, moving, deleting). */
export const VOLUME_BUSY_POLL_MS = 1_000;
/** …and otherwise: a holder can end, or the expiry sweep delete a volume, at any time. */
export const VOLUME_IDLE_POLL_MS = 10_000;

/** Statuses that end on their own: the page re-reads until they settle. */
export const TRANSITIONAL_VOLUME_STATUSES: ReadonlySet<string> = new Set(["creating", "moving", "deleting"]);

/** The list's refresh interval for these volumes. */
export function volumeListPollMs(volumes: readonly Volume[] | undefined): number {
  return volumes?.some((v) => TRANSITIONAL_VOLUME_STATUSES.has(v.status ?? ""))
    ? VOLUME_BUSY_POLL_MS
    : VOLUME_IDLE_POLL_MS;
}

const one = (id: string) => path`/api/v1/volumes/${id}`;

export const volumeQueries = {
  /** Every volume (a handful, a few pages at most): the /volumes page and the create form's picker. */
  list: () =>
    queryOptions({
      queryKey: volumeKeys.list(),
      queryFn: ({ signal }) => apiAll({ path: "/api/v1/volumes", signal }, readVolume),
    }),
  /** One volume, read fresh (the delete dialog asks who holds it right now). */
  detail: (id: string) =>
    queryOptions({
      queryKey: volumeKeys.detail(id),
      queryFn: ({ signal }) => apiJson({ path: one(id), signal }, readVolume),
      staleTime: 0,
    }),
};

export const volumeMutations = {
  /** `idempotencyKey` makes a retried create (after a timeout) return the first volume, not a second. */
  create: (body: CreateVolumeBody, idempotencyKey?: string) =>
    apiJson(
      {
        method: "POST",
        path: "/api/v1/volumes",
        body,
        headers: idempotencyKey ? { "idempotency-key": idempotencyKey } : undefined,
      },
      readVolume,
    ),
  update: (id: string, body: UpdateVolumeBody) => apiJson({ method: "PATCH", path: one(id), body }, readVolume),
  /** 202: the volume comes back `moving`; it is done when its region is the new one and its status settles. */
  move: (id: string, region: string) =>
    apiJson({ method: "POST", path: path`/api/v1/volumes/${id}/move`, body: { region } }, readVolume),
  remove: (id: string) => apiVoid({ method: "DELETE", path: one(id) }),
};
