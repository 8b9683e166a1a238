"use client";

import type { QueryKey } from "@tanstack/react-query";
import { formatClock } from "../../../lib/format";
import { RetryNotice, SlowNotice, type RetryingQuery } from "../../layout/retry-notice";

/**
 * The list's fault notices: a failing read being retried (what failed, the countdown, the rows kept
 * from the last refresh) and a first load that is slow. Loaded by the list only when one may show.
 */
export function ListNotices({
  list,
  queryKey,
}: {
  list: RetryingQuery & { data: unknown; dataUpdatedAt: number; isPending: boolean };
  queryKey: QueryKey;
}) {
  return (
    <>
      {/* A transient failure is retried (lib/queries/retry.ts): say so, with the countdown. */}
      <RetryNotice
        query={list}
        queryKey={queryKey}
        title={list.data ? "The list is not refreshing" : "Your sandboxes could not be loaded yet"}
      >
        {list.data ? (
          <p className="text-muted-foreground">
            The rows below are from the last successful refresh
            {list.dataUpdatedAt ? `, at ${formatClock(list.dataUpdatedAt)}` : ""}.
          </p>
        ) : null}
      </RetryNotice>
      {list.isPending && list.failureCount === 0 ? (
        <SlowNotice waiting={list.isFetching} what="the list of sandboxes" />
      ) : null}
    </>
  );
}
