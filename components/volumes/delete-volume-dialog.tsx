"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { errorText, OrkestrError } from "../../lib/orkestr/errors";
import type { Volume } from "../../lib/orkestr/schemas/volumes";
import { volumeKeys, volumeMutations, volumeQueries } from "../../lib/queries/volumes";
import { formatMebibytes } from "../../lib/format";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { Button } from "../ui/button";
import { DialogActions } from "../ui/dialog";
import { toast } from "../ui/toast";
import { ActionCode } from "./action-code";
import { HolderLink } from "./holder-link";
import { deleteVolumeCode } from "./volume-code";

/**
 * Delete with confirmation. The volume is read afresh when the dialog opens (the list may be up to
 * a refresh old), so a volume a sandbox holds is refused here with the holder named and linked, as
 * the API would refuse it (409 volume_in_use); a holder that appears in between gets the same words.
 */
export function DeleteForm({ volume, baseUrl, onDone }: { volume: Volume; baseUrl?: string; onDone: () => void }) {
  const queryClient = useQueryClient();
  const fresh = useQuery(volumeQueries.detail(volume.id));
  const current = fresh.data ?? volume;
  const mutation = useMutation({
    mutationFn: () => volumeMutations.remove(volume.id),
    onSuccess: () => {
      queryClient.setQueryData<Volume[]>(volumeKeys.list(), (old) => old?.filter((v) => v.id !== volume.id));
      queryClient.removeQueries({ queryKey: volumeKeys.detail(volume.id) });
      void queryClient.invalidateQueries({ queryKey: volumeKeys.list() });
      toast.success(`Deleted volume ${volume.name ?? volume.id}`);
      onDone();
    },
    onError: (error) => {
      // Who holds it now: the refusal's holder, read from the volume itself.
      if (error instanceof OrkestrError && error.code === "volume_in_use") void fresh.refetch();
    },
  });
  const holder = current.attached_sandbox_id;
  const busy = !holder && current.status && current.status !== "available" ? current.status : null;
  const name = current.name ?? current.id;
  return (
    <div className="flex flex-col gap-4">
      <p className="break-all rounded-md bg-muted px-3 py-2 font-mono text-sm">{name}</p>
      {holder ? (
        <Alert variant="destructive" data-testid="delete-refused">
          <AlertTitle>In use: it cannot be deleted now</AlertTitle>
          <AlertDescription>
            Sandbox <HolderLink id={holder} /> holds {name}. A volume is deleted only when no sandbox holds it:
            terminate <span className="font-mono">{holder}</span> first (its /persist files stay on the volume until
            then).
          </AlertDescription>
        </Alert>
      ) : busy ? (
        <Alert variant="warning">
          <AlertTitle>It is {busy} right now</AlertTitle>
          <AlertDescription>Delete it once it is available again.</AlertDescription>
        </Alert>
      ) : (
        <p className="text-sm">
          Its files ({typeof current.size_mb === "number" ? formatMebibytes(current.size_mb) : "all of them"}) are
          deleted with it. This cannot be undone.
        </p>
      )}
      {mutation.error &&
      !(mutation.error instanceof OrkestrError && mutation.error.code === "volume_in_use" && holder) ? (
        <Alert variant="destructive">
          <AlertTitle>The volume was not deleted</AlertTitle>
          <AlertDescription>{errorText(mutation.error)}</AlertDescription>
        </Alert>
      ) : null}
      {fresh.isError ? (
        <p className="text-xs text-muted-foreground">
          Could not re-read the volume ({errorText(fresh.error)}); the API still refuses a delete while it is held.
        </p>
      ) : null}
      <ActionCode what="delete this volume" snippets={deleteVolumeCode(volume.id, baseUrl)} />
      <DialogActions cancelDisabled={mutation.isPending}>
        <Button
          variant="destructive"
          disabled={mutation.isPending || fresh.isPending || !!holder || !!busy}
          onClick={() => mutation.mutate()}
        >
          {fresh.isPending ? "Checking…" : mutation.isPending ? "Deleting…" : "Delete volume"}
        </Button>
      </DialogActions>
    </div>
  );
}
