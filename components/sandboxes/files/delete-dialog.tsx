"use client";

import { Button } from "../../ui/button";
import { Dialog, DialogActions } from "../../ui/dialog";
import type { Entry } from "../../../lib/queries/files";

/** Confirms a delete, naming the path; a folder's delete says it takes everything inside with it. */
export function DeleteDialog({
  entry,
  pending,
  onCancel,
  onConfirm,
}: {
  entry: Entry | null;
  pending: boolean;
  onCancel: () => void;
  onConfirm: (entry: Entry) => void;
}) {
  return (
    <Dialog
      open={entry !== null}
      onOpenChange={(open) => {
        if (!open) onCancel();
      }}
      title={entry?.isDir ? "Delete this folder?" : "Delete this file?"}
      description={
        entry?.isDir
          ? "The folder and everything in it are removed from the sandbox. This cannot be undone."
          : "The file is removed from the sandbox. This cannot be undone."
      }
    >
      {entry ? (
        <div className="flex flex-col gap-4">
          <p className="break-all rounded-md bg-muted px-3 py-2 font-mono text-sm">{entry.path}</p>
          <DialogActions>
            <Button variant="destructive" disabled={pending} onClick={() => onConfirm(entry)}>
              {pending ? "Deleting…" : entry.isDir ? "Delete folder" : "Delete file"}
            </Button>
          </DialogActions>
        </div>
      ) : null}
    </Dialog>
  );
}
