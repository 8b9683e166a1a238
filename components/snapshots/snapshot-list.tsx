"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { formatDateTime, formatMebibytes, formatUtc } from "../../lib/format";
import { snapshotHref } from "../../lib/resource-links";
import { errorText } from "../../lib/orkestr/errors";
import type { Snapshot } from "../../lib/orkestr/schemas/snapshots";
import { sandboxQueries } from "../../lib/queries/sandboxes";
import { snapshotKeys, snapshotQueries } from "../../lib/queries/snapshots";
import { EmptyState } from "../layout/empty-state";
import { RetryNotice } from "../layout/lazy-notices";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { Button } from "../ui/button";
import { ReadOnlyNote } from "../ui/read-only-note";
import { useRoleReason } from "../layout/use-role-reason";
import { CodeTabs } from "../ui/code-tabs";
import { Skeleton } from "../ui/skeleton";
import { CapMeter } from "./cap-meter";
import { DeleteSnapshotDialog } from "./delete-snapshot-dialog";
import { MemoryCell } from "./memory-cell";
import { listSnapshotsCode } from "./snapshot-code";
import { dateTimeAttr, memoryFact, snapshotCap } from "./snapshot-facts";
import { SourceSandbox } from "./source-sandbox";
import { useApiBaseUrl } from "./use-base-url";
import { TableScroll } from "../ui/table";
import { TeamLink as Link } from "../layout/team-link";

const COLUMNS = ["Name", "Source sandbox", "Template, region", "Size", "Created", "Memory", ""];

/** /snapshots: the account's named snapshots, the plan's cap, and per row Fork and Delete. */
export function SnapshotList({ canFork, canDelete }: { canFork: boolean; canDelete: boolean }) {
  const list = useQuery(snapshotQueries.list());
  const limits = useQuery(sandboxQueries.limits());
  const baseUrl = useApiBaseUrl();
  const [deleting, setDeleting] = useState<Snapshot | null>(null);
  const cap = snapshotCap(limits.data, list.data);
  const rows = list.data ?? [];
  const facts = rows.map((s) => memoryFact(s, limits.data));
  // The engine's reason is the same for every snapshot: said once under the table.
  const reason = facts.find((f) => f.reason)?.reason ?? null;
  // Why a row offers no Fork… or Delete… (said once, above the table).
  const noFork = useRoleReason("sandboxes.write", "fork snapshots into sandboxes");
  const noDelete = useRoleReason("snapshots.write", "delete snapshots");
  const noBoth = useRoleReason("snapshots.write", "fork or delete snapshots");

  return (
    <div className="flex flex-col gap-4">
      <div className="flex flex-wrap items-end justify-between gap-4">
        <p className="max-w-2xl text-sm text-muted-foreground">
          A named snapshot is a copy of a running sandbox that any number of new sandboxes fork from. Take one from a
          sandbox&apos;s page (<span className="font-medium text-foreground">Snapshot…</span>).
        </p>
        <CapMeter cap={cap} />
      </div>
      {noFork || noDelete ? <ReadOnlyNote>{noFork && noDelete ? noBoth : (noFork ?? noDelete)}</ReadOnlyNote> : null}
      <RetryNotice query={list} queryKey={snapshotKeys.list()} title="Snapshots could not be read yet">
        {list.data ? <p className="text-muted-foreground">The rows below are from the last successful read.</p> : null}
      </RetryNotice>
      {list.isPending ? (
        <div role="status" aria-label="Loading snapshots" className="flex flex-col gap-2">
          <Skeleton className="h-10 w-full" />
          <Skeleton className="h-10 w-full" />
          <Skeleton className="h-10 w-full" />
        </div>
      ) : list.isError && !list.data ? (
        <Alert variant="destructive">
          <AlertTitle>Snapshots could not be listed</AlertTitle>
          <AlertDescription className="flex flex-wrap items-center gap-3 text-foreground">
            {errorText(list.error)}
            <Button size="sm" variant="outline" onClick={() => list.refetch()}>
              Retry
            </Button>
          </AlertDescription>
        </Alert>
      ) : rows.length === 0 ? (
        <EmptyState
          title="No snapshots yet"
          description={
            <p>
              Open a running sandbox and choose <strong>Snapshot…</strong>: its /workspace and /tmp are copied under a
              name, and you can fork one or many sandboxes from it here.
            </p>
          }
          action={
            <Button asChild>
              <Link href="/sandboxes">Go to sandboxes</Link>
            </Button>
          }
        />
      ) : (
        <TableScroll className="rounded-lg border bg-card">
          <table className="w-full min-w-[44rem] text-sm" aria-label="Snapshots">
            <thead className="border-b text-left text-xs text-muted-foreground">
              <tr>
                {COLUMNS.map((c, i) => (
                  <th key={i} scope="col" className="px-3 py-2 font-medium">
                    {c || <span className="sr-only">Actions</span>}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((s, i) => (
                <tr key={s.id} className="border-b last:border-0" data-testid="snapshot-row">
                  <td className="px-3 py-2">
                    <Link href={snapshotHref(s.id)} className="font-medium underline-offset-4 hover:underline">
                      {s.name ?? s.id}
                    </Link>
                    <div className="font-mono text-xs text-muted-foreground">{s.id}</div>
                  </td>
                  <td className="px-3 py-2">
                    <SourceSandbox id={s.sandbox_id} stacked />
                  </td>
                  <td className="px-3 py-2">
                    <div className="whitespace-nowrap">{s.template ?? "—"}</div>
                    <div className="text-xs text-muted-foreground">
                      <span className="sr-only">Region </span>
                      {s.region ?? "—"}
                    </div>
                  </td>
                  <td className="whitespace-nowrap px-3 py-2 tabular-nums">{formatMebibytes(s.size_mb)}</td>
                  <td className="px-3 py-2 tabular-nums">
                    <time dateTime={dateTimeAttr(s.created_at)} title={formatUtc(s.created_at)}>
                      {formatDateTime(s.created_at)}
                    </time>
                  </td>
                  <td className="px-3 py-2">
                    <MemoryCell fact={facts[i]!} />
                  </td>
                  <td className="px-3 py-2">
                    <div className="flex flex-wrap justify-end gap-2">
                      {canFork ? (
                        <Button size="sm" variant="outline" asChild>
                          <Link href={`${snapshotHref(s.id)}#fork`} aria-label={`Fork ${s.name ?? s.id}`}>
                            Fork…
                          </Link>
                        </Button>
                      ) : null}
                      {canDelete ? (
                        <Button
                          size="sm"
                          variant="outline"
                          aria-label={`Delete ${s.name ?? s.id}`}
                          onClick={() => setDeleting(s)}
                        >
                          Delete…
                        </Button>
                      ) : null}
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      {rows.length ? (
        <p className="text-xs text-muted-foreground">
          Memory: {facts[0]!.summary}
          {reason ? ` The engine says: ${reason}.` : ""}
        </p>
      ) : null}
      <details className="text-sm">
        <summary className="cursor-pointer text-muted-foreground hover:text-foreground">List snapshots as code</summary>
        <div className="pt-2">
          <CodeTabs snippets={listSnapshotsCode(baseUrl)} testId="list-snapshots-code" />
        </div>
      </details>
      {deleting ? (
        <DeleteSnapshotDialog
          snapshot={deleting}
          open
          onOpenChange={(open) => {
            if (!open) setDeleting(null);
          }}
        />
      ) : null}
    </div>
  );
}
