"use client";

import { useState } from "react";
import { formatDateTime, formatMebibytes } from "../../lib/format";
import { snapshotHref } from "../../lib/resource-links";
import type { Snapshot } from "../../lib/orkestr/schemas/snapshots";
import { Button } from "../ui/button";
import { DeleteSnapshotDialog } from "./delete-snapshot-dialog";
import { oldestSnapshots } from "./snapshot-facts";
import { TeamLink as Link } from "../layout/team-link";

/**
 * The plan's snapshot cap is reached: says so with the numbers, and names the oldest snapshots,
 * each with its page and a Delete (confirmed), so the way out is one click away.
 */
export function CapNotice({
  cap,
  plan,
  snapshots,
  onDeleted,
}: {
  cap: number | null;
  plan: string | null | undefined;
  snapshots: readonly Snapshot[];
  /** After one of them is deleted (the refused create may then be tried again). */
  onDeleted?: () => void;
}) {
  const [deleting, setDeleting] = useState<Snapshot | null>(null);
  const oldest = oldestSnapshots(snapshots);
  return (
    <div role="alert" className="flex flex-col gap-2 rounded-md border border-warning/50 bg-warning/10 p-3 text-sm">
      <p className="font-medium">
        {cap !== null
          ? `Your ${plan ? `${plan} plan` : "plan"} keeps at most ${cap} named snapshot${cap === 1 ? "" : "s"}, and all are in use.`
          : "Your plan's named snapshots are all in use."}
      </p>
      {oldest.length ? (
        <>
          <p>Delete one to make room; the oldest are:</p>
          <ul className="flex flex-col gap-1.5" aria-label="Oldest snapshots">
            {oldest.map((s) => (
              <li key={s.id} className="flex flex-wrap items-center justify-between gap-2">
                <span className="min-w-0">
                  <Link href={snapshotHref(s.id)} className="font-medium underline-offset-4 hover:underline">
                    {s.name ?? s.id}
                  </Link>{" "}
                  <span className="text-xs text-muted-foreground">
                    {formatDateTime(s.created_at)} · {formatMebibytes(s.size_mb)}
                  </span>
                </span>
                <Button size="sm" variant="outline" onClick={() => setDeleting(s)}>
                  Delete {s.name ?? s.id}…
                </Button>
              </li>
            ))}
          </ul>
        </>
      ) : (
        <p>
          <Link href="/snapshots" className="font-medium underline underline-offset-4">
            See your snapshots
          </Link>{" "}
          and delete one to make room.
        </p>
      )}
      {deleting ? (
        <DeleteSnapshotDialog
          snapshot={deleting}
          open
          onOpenChange={(open) => {
            if (!open) setDeleting(null);
          }}
          onDeleted={onDeleted}
        />
      ) : null}
    </div>
  );
}
