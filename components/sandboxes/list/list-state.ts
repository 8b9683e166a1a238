// The list's whole view state lives in the URL (shareable, reloadable, Back works): this module is
// the one translation between URLSearchParams and that state, and from the state to the API filters.

import type { ServerFilters } from "../../../lib/queries/sandbox-list";
import { SANDBOX_STATUSES } from "../../../lib/sandbox-status";
import { CREATOR_USER_KEY, creatorFilter } from "../../../lib/sandbox-creator";

/** The statuses the status filter offers; the upstream's default view leaves out the last two. */
export const STATUS_FILTERS = SANDBOX_STATUSES;

export interface ListState {
  /** Statuses to show; empty means the upstream's default (everything but terminated and expired). */
  status: string[];
  template: string;
  region: string;
  /** `metadata[key]=value` filters, in the order they were added. */
  metadata: [key: string, value: string][];
  /** Only sandboxes this user created through Baton (`?creator=<userId>`: the `baton.user` metadata). */
  creator: string;
  /** Search by id, applied to the rows loaded so far (the API has no id search). */
  q: string;
  /** Start the list at this cursor (X-Next-Cursor of an earlier page) instead of the newest sandbox. */
  cursor: string;
}

export const EMPTY_LIST_STATE: ListState = {
  status: [],
  template: "",
  region: "",
  metadata: [],
  creator: "",
  q: "",
  cursor: "",
};

const METADATA_PARAM = /^metadata\[(.+)\]$/;

interface ReadableParams {
  get(name: string): string | null;
  getAll(name: string): string[];
  forEach(fn: (value: string, key: string) => void): void;
}

export function parseListState(params: ReadableParams): ListState {
  const status = params
    .getAll("status")
    .flatMap((s) => s.split(","))
    .map((s) => s.trim())
    .filter(Boolean);
  const metadata: [string, string][] = [];
  params.forEach((value, key) => {
    const k = METADATA_PARAM.exec(key)?.[1];
    // One value per key: the first wins, as on a sandbox a key has one value.
    if (k !== undefined && !metadata.some(([m]) => m === k)) metadata.push([k, value]);
  });
  return {
    status: [...new Set(status)],
    template: params.get("template")?.trim() ?? "",
    region: params.get("region")?.trim() ?? "",
    metadata,
    creator: params.get("creator")?.trim() ?? "",
    q: params.get("q") ?? "",
    cursor: params.get("cursor") ?? "",
  };
}

/** The URL's query string for a state ("" for the default view); metadata keeps its `metadata[k]=v` form. */
export function listStateToSearch(state: ListState): string {
  const params = new URLSearchParams();
  if (state.status.length) params.set("status", state.status.join(","));
  if (state.template) params.set("template", state.template);
  if (state.region) params.set("region", state.region);
  for (const [k, v] of state.metadata) params.append(`metadata[${k}]`, v);
  if (state.creator) params.set("creator", state.creator);
  if (state.q) params.set("q", state.q);
  if (state.cursor) params.set("cursor", state.cursor);
  const s = params.toString();
  return s ? `?${s}` : "";
}

/** What the server filters (everything but the id search); also the list query's cache key. */
export function serverFilters(state: ListState): ServerFilters {
  return {
    status: state.status.join(","),
    template: state.template,
    region: state.region,
    // The creator is a metadata filter on the orkestr API (it wins over a typed baton.user filter).
    metadata: state.creator
      ? [...state.metadata.filter(([k]) => k !== CREATOR_USER_KEY), creatorFilter(state.creator)]
      : state.metadata,
    cursor: state.cursor,
  };
}

/** True when anything narrows the list (an empty result is then "no match", not "no sandboxes yet"). */
export function isFiltered(state: ListState): boolean {
  return (
    state.status.length > 0 ||
    !!state.template ||
    !!state.region ||
    state.metadata.length > 0 ||
    !!state.creator ||
    !!state.q ||
    !!state.cursor
  );
}

/** "key=value" typed into the metadata filter box → [key, value]; null when it is not of that form. */
export function parseMetadataFilter(text: string): [string, string] | null {
  const i = text.indexOf("=");
  if (i <= 0) return null;
  const key = text.slice(0, i).trim();
  const value = text.slice(i + 1).trim();
  return key ? [key, value] : null;
}
