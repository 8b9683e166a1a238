"use client";

import { useQuery } from "@tanstack/react-query";
import { formatDateTime, formatUtc } from "../../lib/format";
import { sandboxHref } from "../../lib/links";
import { snapshotHref } from "../../lib/resource-links";
import { errorText } from "../../lib/orkestr/errors";
import type { Snapshot } from "../../lib/orkestr/schemas/snapshots";
import { snapshotKeys, snapshotQueries } from "../../lib/queries/snapshots";
import { isFinished } from "../../lib/sandbox-status";
import { cn } from "../../lib/utils";
import { RetryNotice } from "../layout/lazy-notices";
import { StatusBadge } from "../sandboxes/status-badge";
import { Skeleton } from "../ui/skeleton";
import { SourceSandbox } from "./source-sandbox";
import { dateTimeAttr } from "./snapshot-facts";
import { TeamLink as Link } from "../layout/team-link";

/**
 * The fork tree of one snapshot: the sandbox it was taken of, the snapshot, and every sandbox born
 * from it (ended ones too, greyed) with its live status, re-read every few seconds while the page is
 * visible. A child's own snapshots hang under it, so a lineage reads top to bottom.
 */
export function ForkTree({ snapshot, allSnapshots }: { snapshot: Snapshot; allSnapshots: readonly Snapshot[] }) {
  const children = useQuery(snapshotQueries.children(snapshot.id));
  const kids = children.data ?? [];
  const live = kids.filter((k) => !isFinished(k.status)).length;
  return (
    <div className="flex flex-col gap-3">
      <RetryNotice
        query={children}
        queryKey={snapshotKeys.children(snapshot.id)}
        title="The forks could not be re-read"
      >
        {children.data ? (
          <p className="text-muted-foreground">The statuses below are from the last successful read.</p>
        ) : null}
      </RetryNotice>
      <ul aria-label="Fork tree" className="flex flex-col gap-2 text-sm">
        <li className="flex flex-col gap-2">
          <div className="flex flex-wrap items-center gap-2">
            <span className="text-xs uppercase tracking-wide text-muted-foreground">Taken of</span>
            <SourceSandbox id={snapshot.sandbox_id} />
          </div>
          <ul className="ml-3 flex flex-col gap-2 border-l pl-4">
            <li className="flex flex-col gap-2">
              <div className="flex flex-wrap items-center gap-2">
                <span className="text-xs uppercase tracking-wide text-muted-foreground">Snapshot</span>
                <span className="font-medium">{snapshot.name ?? snapshot.id}</span>
                <span className="text-xs text-muted-foreground" aria-live="polite" data-testid="fork-count">
                  {children.data
                    ? `${kids.length} fork${kids.length === 1 ? "" : "s"}${kids.length ? `, ${live} live` : ""}`
                    : ""}
                </span>
              </div>
              {children.isPending ? (
                <div role="status" aria-label="Loading the forks" className="ml-3 flex flex-col gap-2 border-l pl-4">
                  <Skeleton className="h-8 w-72" />
                  <Skeleton className="h-8 w-72" />
                </div>
              ) : children.isError && !children.data ? (
                <p role="alert" className="ml-3 border-l pl-4 text-destructive">
                  The forks could not be listed: {errorText(children.error)}
                </p>
              ) : kids.length === 0 ? (
                <p className="ml-3 border-l pl-4 text-muted-foreground">No sandbox has been forked from it yet.</p>
              ) : (
                <ul aria-label="Forks" className="ml-3 flex flex-col gap-1.5 border-l pl-4" data-testid="fork-children">
                  {kids.map((k) => {
                    const grandchildren = allSnapshots.filter((s) => s.sandbox_id === k.id);
                    return (
                      <li key={k.id} data-testid="fork-child" data-status={k.status} className="flex flex-col gap-1">
                        <div className="flex flex-wrap items-center gap-2">
                          <Link
                            href={sandboxHref(k.id)}
                            className={cn(
                              "font-mono text-xs underline-offset-4 hover:underline",
                              // Ended children recede (in a colour that keeps its contrast); the badge says why.
                              isFinished(k.status) && "text-muted-foreground",
                            )}
                          >
                            {k.id}
                          </Link>
                          <StatusBadge status={k.status} />
                          <span className="text-xs text-muted-foreground">
                            {[k.size, k.network ? `network ${k.network}` : null].filter(Boolean).join(" · ")} · created{" "}
                            <time dateTime={dateTimeAttr(k.created_at)} title={formatUtc(k.created_at)}>
                              {formatDateTime(k.created_at)}
                            </time>
                          </span>
                        </div>
                        {grandchildren.length ? (
                          <ul aria-label={`Snapshots of ${k.id}`} className="ml-3 flex flex-col gap-1 border-l pl-4">
                            {grandchildren.map((g) => (
                              <li key={g.id} className="flex items-center gap-2 text-xs">
                                <span className="uppercase tracking-wide text-muted-foreground">Snapshot</span>
                                <Link
                                  href={snapshotHref(g.id)}
                                  className="font-medium underline-offset-4 hover:underline"
                                >
                                  {g.name ?? g.id}
                                </Link>
                              </li>
                            ))}
                          </ul>
                        ) : null}
                      </li>
                    );
                  })}
                </ul>
              )}
            </li>
          </ul>
        </li>
      </ul>
    </div>
  );
}
