"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useId, useRef, useState } from "react";
import { toast } from "../../ui/toast";
import {
  decodeText,
  fileKeys,
  fileMutations,
  fileQueries,
  parentPath,
  VIEWER_MAX_BYTES,
} from "../../../lib/queries/files";
import { Alert, AlertDescription, AlertTitle } from "../../ui/alert";
import { Button } from "../../ui/button";
import { Skeleton } from "../../ui/skeleton";
import { CodeView } from "./code-view";
import { formatBytes } from "../../../lib/format";
import { DownloadIcon, TrashIcon } from "./icons";
import { errorText } from "../../../lib/orkestr/errors";

export interface OpenFile {
  path: string;
  name: string;
  /** From the listing; null when unknown (then the viewer fetches and sees). */
  size: number | null;
}

/**
 * One file: shown with syntax colours when it is small UTF-8 text, editable and saved back as
 * UTF-8 (Ctrl/Cmd-S saves). Binary and large files offer a download instead of being loaded.
 */
export function FileViewer({
  sandboxId,
  file,
  startEditing,
  onClose,
  onDownload,
  onDelete,
}: {
  sandboxId: string;
  file: OpenFile;
  startEditing: boolean;
  onClose: () => void;
  onDownload: () => void;
  /** Null: the file may not be changed (no Edit, no Delete: the role may not change the sandbox). */
  onDelete: (() => void) | null;
}) {
  const tooLarge = file.size !== null && file.size > VIEWER_MAX_BYTES;
  const content = useQuery({ ...fileQueries.file(sandboxId, file.path), enabled: !tooLarge });
  const text = content.data ? decodeText(content.data.bytes) : null;
  const [editing, setEditing] = useState(startEditing);
  /** The user's edits; null while the text is as loaded. */
  const [draft, setDraft] = useState<string | null>(null);
  const editorId = useId();
  const queryClient = useQueryClient();

  const save = useMutation({
    mutationFn: (value: string) => fileMutations.writeText(sandboxId, file.path, value),
    onSuccess: (written, value) => {
      queryClient.setQueryData(fileKeys.file(sandboxId, file.path), {
        bytes: new TextEncoder().encode(value),
        size: written.size ?? null,
      });
      void queryClient.invalidateQueries({ queryKey: fileKeys.dir(sandboxId, parentPath(file.path)) });
      setDraft(null);
      setEditing(false);
      toast.success(`Saved ${file.path}`, {
        description: written.size != null ? formatBytes(written.size) : undefined,
      });
    },
    onError: (e) => toast.error(`Could not save ${file.path}`, { description: errorText(e) }),
  });

  const dirty = draft !== null && draft !== text;
  const inEditor = editing && text !== null && onDelete !== null;
  const value = draft ?? text ?? "";

  // Opening the editor is an explicit action (Edit, New file): the caret goes there. Not through
  // autoFocus: "New file" opens it while its modal dialog is still up, which makes the rest of the
  // page inert, so the focus waits for the task after the dialog has closed.
  const editorRef = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    if (!inEditor) return;
    const t = setTimeout(() => editorRef.current?.focus());
    return () => clearTimeout(t);
  }, [inEditor]);

  return (
    <section aria-label={`File ${file.path}`} className="flex min-w-0 flex-col gap-3">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <div className="min-w-0">
          <h3 className="truncate font-mono text-sm font-semibold" title={file.path}>
            {file.name}
          </h3>
          <p className="text-xs text-muted-foreground">
            {formatBytes(content.data?.size ?? file.size)}
            {inEditor ? (dirty ? " · edited, not saved" : " · editing") : ""}
          </p>
        </div>
        <div className="flex flex-wrap items-center gap-2">
          {!inEditor ? (
            <>
              {text !== null && onDelete ? (
                <Button size="sm" variant="outline" onClick={() => setEditing(true)}>
                  Edit
                </Button>
              ) : null}
              <Button size="sm" variant="outline" onClick={onDownload} aria-label={`Download ${file.name}`}>
                <DownloadIcon /> Download
              </Button>
              {onDelete ? (
                <Button size="sm" variant="outline" onClick={onDelete} aria-label={`Delete ${file.name}`}>
                  <TrashIcon /> Delete
                </Button>
              ) : null}
              <Button size="sm" variant="ghost" onClick={onClose}>
                Close
              </Button>
            </>
          ) : (
            <>
              <Button size="sm" onClick={() => save.mutate(value)} disabled={save.isPending}>
                {save.isPending ? "Saving…" : "Save"}
              </Button>
              <Button
                size="sm"
                variant="ghost"
                disabled={save.isPending}
                onClick={() => {
                  if (dirty && !window.confirm(`Discard your changes to ${file.name}?`)) return;
                  setDraft(null);
                  setEditing(false);
                }}
              >
                Cancel
              </Button>
            </>
          )}
        </div>
      </div>

      {tooLarge ? (
        <Alert role="status">
          <AlertTitle>Too large to show here</AlertTitle>
          <AlertDescription>
            {file.name} is {formatBytes(file.size)}; the viewer opens files up to {formatBytes(VIEWER_MAX_BYTES)}.
            Download it instead.
          </AlertDescription>
        </Alert>
      ) : content.isPending ? (
        <Skeleton className="h-48 w-full" />
      ) : content.isError ? (
        <Alert variant="destructive">
          <AlertTitle>Could not read {file.name}</AlertTitle>
          <AlertDescription className="flex flex-col items-start gap-2">
            <p>{errorText(content.error)}</p>
            <Button size="sm" variant="outline" onClick={() => void content.refetch()}>
              Try again
            </Button>
          </AlertDescription>
        </Alert>
      ) : text === null ? (
        <Alert role="status">
          <AlertTitle>Binary file</AlertTitle>
          <AlertDescription>
            {file.name} is not UTF-8 text, so it is not shown here. Download it to open it.
          </AlertDescription>
        </Alert>
      ) : inEditor ? (
        <div className="flex flex-col gap-1.5">
          <label htmlFor={editorId} className="sr-only">
            Edit {file.name}
          </label>
          <textarea
            id={editorId}
            ref={editorRef}
            value={value}
            onChange={(e) => setDraft(e.target.value)}
            onKeyDown={(e) => {
              if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "s") {
                e.preventDefault();
                if (!save.isPending) save.mutate(value);
              }
            }}
            spellCheck={false}
            autoCapitalize="off"
            autoCorrect="off"
            className="min-h-72 w-full resize-y rounded-md border border-input bg-background px-3 py-2 font-mono text-[13px] leading-5 outline-none focus-visible:ring-2 focus-visible:ring-ring"
          />
          <p className="text-xs text-muted-foreground">
            Saved as UTF-8 text. Ctrl+S (⌘S) saves; Tab moves to the next control.
          </p>
        </div>
      ) : (
        <CodeView text={text} fileName={file.name} />
      )}
    </section>
  );
}
