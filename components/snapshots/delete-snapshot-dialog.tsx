"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { errorText } from "../../lib/orkestr/errors";
import type { Snapshot } from "../../lib/orkestr/schemas/snapshots";
import { sandboxKeys } from "../../lib/queries/sandboxes";
import { snapshotKeys, snapshotMutations } from "../../lib/queries/snapshots";
import { Button } from "../ui/button";
import { CodeTabs } from "../ui/code-tabs";
import { Dialog, DialogActions } from "../ui/dialog";
import { toast } from "../ui/toast";
import { deleteSnapshotCode } from "./snapshot-code";
import { useApiBaseUrl } from "./use-base-url";

/** The one way to delete a snapshot: a confirmation that says what goes and what stays. */
export function DeleteSnapshotDialog({
  snapshot,
  open,
  onOpenChange,
  onDeleted,
}: {
  snapshot: Snapshot;
  open: boolean;
  onOpenChange: (open: boolean) => void;
  onDeleted?: () => void;
}) {
  const queryClient = useQueryClient();
  const baseUrl = useApiBaseUrl();
  const label = snapshot.name ?? snapshot.id;
  const mutation = useMutation({
    mutationFn: () => snapshotMutations.remove(snapshot.id),
    onSuccess: () => {
      toast.success(`Deleted snapshot ${label}`);
      onOpenChange(false);
      onDeleted?.();
    },
    onSettled: () => {
      // The list, not the deleted snapshot's own query: re-reading that would only fetch a 404.
      void queryClient.invalidateQueries({ queryKey: snapshotKeys.list() });
      // The plan's named-snapshot count is in the limits.
      void queryClient.invalidateQueries({ queryKey: sandboxKeys.limits() });
    },
  });
  return (
    <Dialog
      open={open}
      onOpenChange={(next) => {
        if (!next) mutation.reset();
        onOpenChange(next);
      }}
      title={`Delete snapshot ${label}?`}
      description="Its files are deleted for good and no new fork can start from it. Sandboxes already forked from it keep their own copies and keep running."
    >
      {mutation.isError ? (
        <p role="alert" className="text-sm font-medium text-destructive">
          Could not delete it: {errorText(mutation.error)}
        </p>
      ) : null}
      <details className="text-sm">
        <summary className="cursor-pointer text-muted-foreground hover:text-foreground">Show code</summary>
        <div className="pt-2">
          <CodeTabs snippets={deleteSnapshotCode(snapshot.id, baseUrl)} testId="delete-snapshot-code" />
        </div>
      </details>
      <DialogActions cancelDisabled={mutation.isPending}>
        <Button variant="destructive" disabled={mutation.isPending} onClick={() => mutation.mutate()}>
          {mutation.isPending ? "Deleting…" : "Delete snapshot"}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
