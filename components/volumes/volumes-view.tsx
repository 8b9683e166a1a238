"use client";

import { QueryError } from "../layout/query-error";
import { useQuery } from "@tanstack/react-query";
import dynamic from "next/dynamic";
import { useSearchParams } from "next/navigation";
import { useState } from "react";
import { formatClock, formatGibibytes } from "../../lib/format";
import { errorText } from "../../lib/orkestr/errors";
import type { Volume } from "../../lib/orkestr/schemas/volumes";
import { sandboxQueries } from "../../lib/queries/sandboxes";
import { volumeKeys, volumeListPollMs, volumeQueries } from "../../lib/queries/volumes";
import { EmptyState } from "../layout/empty-state";
import { NavIcon } from "../layout/nav-icons";
import { RetryNotice, SlowNotice } from "../layout/lazy-notices";

import { Button } from "../ui/button";
import { ReadOnlyNote } from "../ui/read-only-note";
import { useRoleReason } from "../layout/use-role-reason";
import { Skeleton } from "../ui/skeleton";
import { ActionCode } from "./action-code";
import type { VolumeAction, VolumeActionKind } from "./volume-action-dialog";
import { attachVolumeCode } from "./volume-code";
import { maxVolumeGb } from "./volume-model";
import { VolumeTable } from "./volume-table";

// The dialogs load when first opened: a page that only lists never needs their code.
const CreateVolumeDialog = dynamic(() => import("./create-volume-dialog").then((m) => m.CreateVolumeDialog), {
  ssr: false,
});
const VolumeActionDialog = dynamic(() => import("./volume-action-dialog").then((m) => m.VolumeActionDialog), {
  ssr: false,
});

/**
 * The volumes page's body: the list (re-read every 10 s, every second while one is creating, moving
 * or deleting), the plan's cap, and the dialogs for create, grow, lifetime, move and delete.
 */
export function VolumesView({ canWrite, baseUrl }: { canWrite: boolean; baseUrl?: string }) {
  const list = useQuery({ ...volumeQueries.list(), refetchInterval: (q) => volumeListPollMs(q.state.data) });
  const limits = useQuery(sandboxQueries.limits());
  const highlight = useSearchParams().get("volume");
  const [creating, setCreating] = useState(false);
  const [action, setAction] = useState<VolumeAction | null>(null);
  // Mounted from the first action on, so closing one returns focus to its button (the dialog's own close).
  const [actionsWanted, setActionsWanted] = useState(false);
  const regions = limits.data?.regions ?? [];
  const maxGb = maxVolumeGb(limits.data?.max_volume_gb);
  const cap = typeof limits.data?.max_volumes === "number" ? limits.data.max_volumes : null;
  const volumes = list.data ?? [];
  const atCap = cap !== null && volumes.length >= cap;
  const open = (kind: VolumeActionKind, volume: Volume) => {
    setActionsWanted(true);
    setAction({ kind, volume });
  };

  // The role's reason where New volume and the row actions would be (the API refuses them with 403).
  const readOnly = useRoleReason("volumes.write", "create, grow, move or delete volumes");
  const createButton = canWrite ? (
    <Button onClick={() => setCreating(true)} disabled={atCap} title={atCap ? "Delete a volume first" : undefined}>
      New volume
    </Button>
  ) : readOnly ? (
    <ReadOnlyNote className="max-w-md">{readOnly}</ReadOnlyNote>
  ) : null;

  return (
    <div className="flex flex-col gap-4">
      {list.data ? (
        <div className="flex flex-wrap items-center justify-between gap-3">
          <p className="text-sm text-muted-foreground" data-testid="volume-count">
            {cap === null
              ? `${volumes.length} volume${volumes.length === 1 ? "" : "s"}`
              : `${volumes.length} of ${cap} volume${cap === 1 ? "" : "s"} this plan keeps`}
            {atCap ? ": delete one to create another." : "."}
          </p>
          {volumes.length > 0 ? createButton : null}
        </div>
      ) : null}

      {/* A transient failure is retried (lib/queries/retry.ts): say so, with the countdown. */}
      <RetryNotice
        query={list}
        queryKey={volumeKeys.list()}
        title={list.data ? "The volume list is not refreshing" : "Your volumes could not be loaded yet"}
      >
        {list.data ? (
          <p className="text-muted-foreground">
            The rows below are from the last successful refresh, at {formatClock(list.dataUpdatedAt)}.
          </p>
        ) : null}
      </RetryNotice>
      {list.isPending && list.failureCount === 0 ? (
        <SlowNotice waiting={list.isFetching} what="the list of volumes" />
      ) : null}

      {list.isPending ? (
        <div className="flex flex-col gap-2 rounded-lg border p-3" role="status" aria-label="Loading volumes">
          {Array.from({ length: 4 }, (_, i) => (
            <Skeleton key={i} className="h-10 w-full" />
          ))}
        </div>
      ) : list.isError && !list.data ? (
        <QueryError
          title="Could not load your volumes"
          error={list.error}
          fallback="The list could not be loaded."
          onRetry={() => void list.refetch()}
        />
      ) : volumes.length === 0 ? (
        <EmptyState
          icon={<NavIcon name="volumes" />}
          title="No volumes yet"
          description={
            <div className="flex flex-col gap-3 text-left">
              <p className="text-center">
                A volume is a disk that outlives sandboxes: a sandbox created with it finds it at /persist, and so does
                the next one.
                {canWrite ? " Create one here, or name one when you create a sandbox and it is made on first use." : ""}
              </p>
              <ActionCode what="attach a volume at sandbox create" snippets={attachVolumeCode("my-cache", baseUrl)} />
            </div>
          }
          action={createButton}
        />
      ) : (
        <VolumeTable volumes={volumes} canWrite={canWrite} onAction={open} highlight={highlight} />
      )}

      {limits.isError ? (
        <p className="text-xs text-muted-foreground">
          The plan&apos;s limits could not be read ({errorText(limits.error)}): sizes up to {formatGibibytes(maxGb)} are
          offered and regions are left to the API.
        </p>
      ) : null}

      {canWrite ? (
        <>
          <CreateVolumeDialog
            open={creating}
            onOpenChange={setCreating}
            regions={regions}
            maxGb={maxGb}
            existing={volumes}
            baseUrl={baseUrl}
          />
          {actionsWanted ? (
            <VolumeActionDialog
              action={action}
              onClose={() => setAction(null)}
              maxGb={maxGb}
              regions={regions}
              baseUrl={baseUrl}
            />
          ) : null}
        </>
      ) : null}
    </div>
  );
}
