import { queryOptions } from "@tanstack/react-query";
import { sandboxKeys, sandboxQueries } from "./sandboxes";

// The plan's limits in the browser. Forms (create, the list's region filter, the terminal's PTY
// check) read them through sandboxQueries.limits(): the plan and its menus change rarely. The
// Limits page reads the same key live: the counts against each cap move with every create, pause
// and delete. Sharing the key means whichever read is newer serves the other. (The read lives in
// ./sandboxes.ts so the sandbox list's first load carries no second copy of it.)

/** How often the Limits page re-reads while it is visible (a create moves the RAM used). */
export const LIMITS_POLL_MS = 5_000;

/** Under "sandboxes": invalidating every sandbox key after a create or terminate refreshes it too. */
export const limitsKey = sandboxKeys.limits;

export const limitsQueries = {
  /** Plan, sizes, regions, egress hosts: for forms and filters. */
  plan: sandboxQueries.limits,
  /**
   * Every figure live: re-read every LIMITS_POLL_MS while the tab is visible (TanStack skips
   * interval reads in a hidden tab) and at once when the window regains focus.
   */
  live: () =>
    queryOptions({
      ...sandboxQueries.limits(),
      refetchInterval: LIMITS_POLL_MS,
      refetchIntervalInBackground: false,
      refetchOnWindowFocus: true,
      staleTime: 0,
    }),
};
