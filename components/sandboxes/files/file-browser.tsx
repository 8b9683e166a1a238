"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { usePathname, useSearchParams } from "next/navigation";
import { useCallback, useRef, useState, type DragEvent } from "react";
import { toast } from "../../ui/toast";
import type { Sandbox } from "../../../lib/orkestr/schemas/sandboxes";
import { fileKeys, fileMutations, fileQueries, joinPath, parentPath, type Entry } from "../../../lib/queries/files";
import { startDownload } from "./transfer";
import { cn } from "../../../lib/utils";
import { Alert, AlertDescription, AlertTitle } from "../../ui/alert";
import { Button } from "../../ui/button";
import { Dialog, DialogActions } from "../../ui/dialog";
import { Breadcrumbs } from "./breadcrumbs";
import { DeleteDialog } from "./delete-dialog";
import { FileTable } from "./file-table";
import { FileViewer, type OpenFile } from "./file-viewer";
import { FilePlusIcon, FolderPlusIcon, RefreshIcon, UploadIcon } from "./icons";
import { NameDialog } from "./name-dialog";
import { errorText } from "../../../lib/orkestr/errors";
import { UploadsPanel } from "./uploads-panel";
import { volumesHref } from "../../../lib/resource-links";
import { useUploads } from "./use-uploads";
import { ReadOnlyNote } from "../../ui/read-only-note";
import { useSandboxAccess } from "../detail/use-sandbox-access";
import { useTeamRouter } from "../../layout/team-link";

export const WORKSPACE = "/workspace";
/** Where a volume is mounted (seed 003). */
export const PERSIST = "/persist";

/** The roots the tab browses: /workspace always, /persist when the sandbox has a volume. */
export function rootsOf(sandbox: Sandbox): string[] {
  return sandbox.volume ? [WORKSPACE, PERSIST] : [WORKSPACE];
}

function rootOf(path: string, roots: string[]): string | null {
  return roots.find((r) => path === r || path.startsWith(`${r}/`)) ?? null;
}

/**
 * The Files tab: a folder's listing with breadcrumbs (state in the URL: ?path= and ?file=, so a
 * folder or file can be linked and survives reloads), a viewer/editor for the open file, uploads
 * by button or drag and drop, downloads, new folders and files, and deletes after confirmation.
 */
export function FileBrowser({ sandbox }: { sandbox: Sandbox }) {
  const sandboxId = sandbox.id;
  const roots = rootsOf(sandbox);
  const router = useTeamRouter();
  const pathname = usePathname();
  const search = useSearchParams();
  const asked = search.get("path") ?? WORKSPACE;
  const dir = rootOf(asked, roots) ? asked.replace(/\/+$/, "") || WORKSPACE : WORKSPACE;
  const root = rootOf(dir, roots) ?? WORKSPACE;
  const openPath = search.get("file");
  const queryClient = useQueryClient();
  // Viewers browse, open and download; uploads, edits, new files and folders and deletes are not offered.
  const { canChange, whyNot } = useSandboxAccess();

  const listing = useQuery(fileQueries.dir(sandboxId, dir));
  const entries = listing.data ?? [];

  // The open file: as clicked (with its size, maybe "open in the editor"), or from the URL alone.
  const [openState, setOpenState] = useState<{ file: OpenFile; edit: boolean } | null>(null);
  const listed = openPath ? entries.find((e) => e.path === openPath) : undefined;
  const open: { file: OpenFile; edit: boolean } | null = openPath
    ? openState?.file.path === openPath
      ? openState
      : {
          file: { path: openPath, name: openPath.split("/").pop() ?? openPath, size: listed?.size ?? null },
          edit: false,
        }
    : null;

  const go = useCallback(
    (next: { path?: string; file?: string | null }) => {
      const params = new URLSearchParams(search.toString());
      if (next.path !== undefined) params.set("path", next.path);
      if (next.file === null) params.delete("file");
      else if (next.file !== undefined) params.set("file", next.file);
      router.push(`${pathname}?${params.toString()}`, { scroll: false });
    },
    [pathname, router, search],
  );

  const uploads = useUploads(sandboxId);

  const [dialog, setDialog] = useState<"folder" | "file" | null>(null);
  const [nameError, setNameError] = useState<string | null>(null);
  const [toDelete, setToDelete] = useState<Entry | null>(null);
  const [pendingDrop, setPendingDrop] = useState<{ dir: string; files: File[]; replacing: string[] } | null>(null);
  const [dragging, setDragging] = useState(false);
  const dragDepth = useRef(0);
  const fileInput = useRef<HTMLInputElement>(null);

  const refreshDir = () => queryClient.invalidateQueries({ queryKey: fileKeys.dir(sandboxId, dir) });

  const openFile = (entry: Entry, edit = false) => {
    setOpenState({ file: { path: entry.path, name: entry.name, size: entry.size }, edit });
    go({ file: entry.path });
  };

  const mkdir = useMutation({
    mutationFn: (name: string) => fileMutations.mkdir(sandboxId, joinPath(dir, name)),
    onSuccess: (_r, name) => {
      setDialog(null);
      void refreshDir();
      toast.success(`Created folder ${joinPath(dir, name)}`);
    },
    onError: (e) => setNameError(errorText(e)),
  });

  const newFile = useMutation({
    mutationFn: async (name: string) => {
      const path = joinPath(dir, name);
      if (entries.some((e) => e.name === name))
        throw new Error(`${name} already exists here: open it from the list to edit it.`);
      await fileMutations.writeText(sandboxId, path, "");
      return path;
    },
    onSuccess: (path, name) => {
      setDialog(null);
      void refreshDir();
      queryClient.setQueryData(fileKeys.file(sandboxId, path), { bytes: new Uint8Array(), size: 0 });
      openFile({ name, path, isDir: false, size: 0, modifiedAt: null }, true);
    },
    onError: (e) => setNameError(errorText(e)),
  });

  const remove = useMutation({
    mutationFn: (entry: Entry) => fileMutations.remove(sandboxId, entry.path, entry.isDir),
    onSuccess: (_r, entry) => {
      setToDelete(null);
      queryClient.removeQueries({ queryKey: fileKeys.file(sandboxId, entry.path) });
      void queryClient.invalidateQueries({ queryKey: fileKeys.dir(sandboxId, parentPath(entry.path)) });
      if (openPath && (openPath === entry.path || openPath.startsWith(`${entry.path}/`))) go({ file: null });
      toast.success(`Deleted ${entry.path}`);
    },
    onError: (e, entry) => toast.error(`Could not delete ${entry.path}`, { description: errorText(e) }),
  });

  const download = async (path: string) => {
    try {
      const link = await fileMutations.presignDownload(sandboxId, path);
      startDownload(link.url, path.split("/").pop() ?? "download");
    } catch (e) {
      toast.error(`Could not download ${path}`, { description: errorText(e) });
    }
  };

  /** Queues files for the current folder, asking first when some would replace existing files. */
  const offer = (files: File[]) => {
    if (files.length === 0) return;
    const existing = new Set(entries.filter((e) => !e.isDir).map((e) => e.name));
    const folders = new Set(entries.filter((e) => e.isDir).map((e) => e.name));
    const clash = files.filter((f) => folders.has(f.name));
    if (clash.length) {
      toast.error("Some names are folders here", {
        description: `${clash.map((f) => f.name).join(", ")}: rename the file or the folder first.`,
      });
      files = files.filter((f) => !folders.has(f.name));
    }
    const replacing = files.filter((f) => existing.has(f.name)).map((f) => f.name);
    if (replacing.length) setPendingDrop({ dir, files, replacing });
    else uploads.add(dir, files);
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    dragDepth.current = 0;
    setDragging(false);
    const items = [...e.dataTransfer.items];
    // A dropped folder arrives as a File that cannot be read: say so rather than fail on it.
    const dirs = items
      .filter((i) => i.kind === "file" && i.webkitGetAsEntry?.()?.isDirectory)
      .map((i) => i.getAsFile()?.name ?? "folder");
    if (dirs.length)
      toast.error("Folders cannot be dropped", {
        description: `${dirs.join(", ")}: drop the files inside, or upload an archive and unpack it in the terminal.`,
      });
    offer([...e.dataTransfer.files].filter((f) => !dirs.includes(f.name)));
  };

  const hasFiles = (e: DragEvent) => canChange && [...e.dataTransfer.types].includes("Files");

  return (
    // The open file goes below the listing, not beside it: the console's content column is too
    // narrow for both a readable listing and a readable file side by side.
    <div className="flex flex-col gap-4">
      <section
        aria-labelledby="files-heading"
        className={cn(
          "relative flex min-w-0 flex-col gap-3 rounded-lg border bg-card p-4",
          dragging && "ring-2 ring-primary ring-offset-2 ring-offset-background",
        )}
        data-testid="file-drop-zone"
        onDragEnter={(e) => {
          if (!hasFiles(e)) return;
          e.preventDefault();
          dragDepth.current++;
          setDragging(true);
        }}
        onDragOver={(e) => {
          if (!hasFiles(e)) return;
          e.preventDefault();
          e.dataTransfer.dropEffect = "copy";
        }}
        onDragLeave={() => {
          dragDepth.current = Math.max(0, dragDepth.current - 1);
          if (dragDepth.current === 0) setDragging(false);
        }}
        onDrop={(e) => (canChange ? onDrop(e) : e.preventDefault())}
      >
        <h3 id="files-heading" className="sr-only">
          Files in {dir}
        </h3>
        {roots.length > 1 ? (
          <div role="group" aria-label="Location" className="inline-flex w-fit rounded-md border p-0.5">
            {roots.map((r) => (
              <button
                key={r}
                type="button"
                aria-pressed={r === root}
                onClick={() => go({ path: r, file: null })}
                className={cn(
                  "rounded px-3 py-1 font-mono text-xs",
                  r === root
                    ? "bg-secondary font-semibold text-secondary-foreground"
                    : "text-muted-foreground hover:bg-accent",
                )}
              >
                {r}
                {r === PERSIST ? (
                  <span className="ml-1.5 rounded-sm bg-primary/10 px-1 font-sans text-[0.65rem] font-medium text-foreground">
                    volume
                  </span>
                ) : null}
              </button>
            ))}
          </div>
        ) : null}
        {root === PERSIST && sandbox.volume ? <VolumeNote volume={sandbox.volume} /> : null}
        <div className="flex flex-wrap items-center justify-between gap-2">
          <Breadcrumbs root={root} path={dir} onNavigate={(p) => go({ path: p, file: null })} />
          <div className="flex flex-wrap items-center gap-1.5">
            {canChange ? (
              <>
                <Button size="sm" variant="outline" onClick={() => (setNameError(null), setDialog("folder"))}>
                  <FolderPlusIcon /> New folder
                </Button>
                <Button size="sm" variant="outline" onClick={() => (setNameError(null), setDialog("file"))}>
                  <FilePlusIcon /> New file
                </Button>
                <Button size="sm" variant="outline" onClick={() => fileInput.current?.click()}>
                  <UploadIcon /> Upload
                </Button>
              </>
            ) : null}
            <Button
              size="sm"
              variant="ghost"
              onClick={() => void listing.refetch()}
              aria-label="Refresh the listing"
              disabled={listing.isFetching}
            >
              <RefreshIcon className={cn(listing.isFetching && "animate-spin")} />
            </Button>
            {canChange ? (
              <input
                ref={fileInput}
                type="file"
                multiple
                className="sr-only"
                tabIndex={-1}
                aria-label={`Choose files to upload to ${dir}`}
                onChange={(e) => {
                  offer([...(e.target.files ?? [])]);
                  e.target.value = "";
                }}
              />
            ) : null}
          </div>
        </div>

        {listing.isError ? (
          <Alert variant="destructive">
            <AlertTitle>Could not list {dir}</AlertTitle>
            <AlertDescription className="flex flex-col items-start gap-2">
              <p>{errorText(listing.error)}</p>
              <div className="flex gap-2">
                <Button size="sm" variant="outline" onClick={() => void listing.refetch()}>
                  Try again
                </Button>
                {dir !== root ? (
                  <Button size="sm" variant="ghost" onClick={() => go({ path: parentPath(dir), file: null })}>
                    Go up
                  </Button>
                ) : null}
              </div>
            </AlertDescription>
          </Alert>
        ) : (
          <FileTable
            dir={dir}
            entries={entries}
            loading={listing.isPending}
            openPath={openPath}
            onOpen={(e) => (e.isDir ? go({ path: e.path, file: null }) : openFile(e))}
            onDownload={(e) => void download(e.path)}
            onDelete={canChange ? setToDelete : null}
          />
        )}

        <UploadsPanel uploads={uploads.uploads} onCancel={uploads.cancel} onClear={uploads.clearFinished} />
        {canChange ? (
          <p className="text-xs text-muted-foreground">
            Drop files anywhere on this panel to upload them to <span className="font-mono">{dir}</span>. Files over 1
            MiB stream through a presigned upload with progress.
          </p>
        ) : (
          <ReadOnlyNote>{whyNot("upload, edit or delete files")} You can open and download them.</ReadOnlyNote>
        )}
        {dragging ? (
          <div
            aria-hidden="true"
            className="pointer-events-none absolute inset-0 flex items-center justify-center rounded-lg bg-background/80 text-sm font-medium"
          >
            Drop to upload to <span className="ml-1 font-mono">{dir}</span>
          </div>
        ) : null}
      </section>

      {open ? (
        <div className="min-w-0 rounded-lg border bg-card p-4">
          <FileViewer
            key={open.file.path}
            sandboxId={sandboxId}
            file={open.file}
            startEditing={open.edit}
            onClose={() => go({ file: null })}
            onDownload={() => void download(open.file.path)}
            onDelete={
              canChange
                ? () =>
                    setToDelete({
                      name: open.file.name,
                      path: open.file.path,
                      isDir: false,
                      size: open.file.size,
                      modifiedAt: null,
                    })
                : null
            }
          />
        </div>
      ) : null}

      <NameDialog
        open={dialog === "folder"}
        onOpenChange={(o) => !o && setDialog(null)}
        title="New folder"
        description={`Created in ${dir}.`}
        label="Folder name"
        submitLabel="Create folder"
        pending={mkdir.isPending}
        error={nameError}
        onSubmit={(name) => mkdir.mutate(name)}
      />
      <NameDialog
        open={dialog === "file"}
        onOpenChange={(o) => !o && setDialog(null)}
        title="New file"
        description={`Created empty in ${dir} and opened in the editor.`}
        label="File name"
        submitLabel="Create file"
        pending={newFile.isPending}
        error={nameError}
        onSubmit={(name) => newFile.mutate(name)}
      />
      <DeleteDialog
        entry={toDelete}
        pending={remove.isPending}
        onCancel={() => setToDelete(null)}
        onConfirm={(e) => remove.mutate(e)}
      />
      <Dialog
        open={pendingDrop !== null}
        onOpenChange={(o) => !o && setPendingDrop(null)}
        title={
          pendingDrop && pendingDrop.replacing.length === 1 ? "Replace an existing file?" : "Replace existing files?"
        }
        description={
          pendingDrop
            ? `${pendingDrop.replacing.length} of the ${pendingDrop.files.length} files already exist in ${pendingDrop.dir}; uploading overwrites them.`
            : undefined
        }
      >
        {pendingDrop ? (
          <div className="flex flex-col gap-4">
            <ul className="max-h-40 overflow-auto rounded-md bg-muted px-3 py-2 font-mono text-sm">
              {pendingDrop.replacing.map((n) => (
                <li key={n}>{n}</li>
              ))}
            </ul>
            <DialogActions>
              <Button
                onClick={() => {
                  uploads.add(pendingDrop.dir, pendingDrop.files);
                  setPendingDrop(null);
                }}
              >
                Replace and upload
              </Button>
            </DialogActions>
          </div>
        ) : null}
      </Dialog>
    </div>
  );
}

/** Under /persist: which volume this is (a link to it on the volumes page) and that its files stay. */
function VolumeNote({ volume }: { volume: NonNullable<Sandbox["volume"]> }) {
  const name = typeof volume === "string" ? volume : (volume.name ?? volume.id ?? "volume");
  const ref = typeof volume === "string" ? volume : (volume.id ?? volume.name ?? null);
  return (
    <p className="text-xs text-muted-foreground" data-testid="persist-note">
      /persist is the volume{" "}
      {ref ? (
        <a href={volumesHref(ref)} className="font-mono text-primary underline underline-offset-4">
          {name}
        </a>
      ) : (
        <span className="font-mono">{name}</span>
      )}
      : what is here outlives this sandbox, and the next sandbox created with the volume finds it.
    </p>
  );
}
