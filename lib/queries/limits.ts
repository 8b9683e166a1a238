import { queryOptions } from "@tanstack/react-query";
import { apiJson } from "../api/core";
import { object } from "../api/read";
// Types only: zod stays out of the browser bundle (lib/api/core.ts says why).
import type { Limits } from "../orkestr/schemas/limits";

// The plan's limits in the browser: one key and two ways to read it. Forms (create, the list's
// region filter, the terminal's PTY check) want the plan and its menus, which change rarely; the
// Limits page wants the counts against each cap, which move with every create, pause and delete.
// Both share the key, so whichever read is newer serves the other.

/** How often the Limits page re-reads while it is visible (a create moves the RAM used). */
export const LIMITS_POLL_MS = 5_000;

/** Under "sandboxes": invalidating every sandbox key after a create or terminate refreshes it too. */
export const limitsKey = () => ["sandboxes", "limits"] as const;

const readLimits = object<Limits>(
  {},
  { sizes: "array", regions: "array", host_capacity: "object", isolation: "object" },
);

/** GET /api/v1/sandboxes/limits (alias /api/v1/limits): the plan, its caps, this account's counts and (local engine) this machine's clamp. */
export function fetchLimits(signal?: AbortSignal): Promise<Limits> {
  return apiJson({ path: "/api/v1/sandboxes/limits", signal }, readLimits);
}

export const limitsQueries = {
  /** Plan, sizes, regions, egress hosts: for forms and filters. */
  plan: () =>
    queryOptions({
      queryKey: limitsKey(),
      queryFn: ({ signal }) => fetchLimits(signal),
      staleTime: 5 * 60_000,
    }),
  /**
   * Every figure live: re-read every LIMITS_POLL_MS while the tab is visible (TanStack skips
   * interval reads in a hidden tab) and at once when the window regains focus.
   */
  live: () =>
    queryOptions({
      queryKey: limitsKey(),
      queryFn: ({ signal }) => fetchLimits(signal),
      refetchInterval: LIMITS_POLL_MS,
      refetchIntervalInBackground: false,
      refetchOnWindowFocus: true,
      staleTime: 0,
    }),
};
