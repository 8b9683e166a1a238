"use client";

import type { Entry } from "../../../lib/queries/files";
import { cn } from "../../../lib/utils";
import { Button } from "../../ui/button";
import { Skeleton } from "../../ui/skeleton";
import { formatBytes, formatDateTime } from "../../../lib/format";
import { DownloadIcon, FileIcon, FolderIcon, TrashIcon } from "./icons";
import { TableScroll } from "../../ui/table";

/**
 * A folder's entries, folders first. The name opens (a folder: go there; a file: view it); each row
 * has Download (files) and Delete. Plain buttons in a table: every action is reachable by Tab and
 * named for screen readers with the entry it acts on.
 */
export function FileTable({
  dir,
  entries,
  loading,
  openPath,
  onOpen,
  onDownload,
  onDelete,
}: {
  dir: string;
  entries: Entry[];
  loading: boolean;
  openPath: string | null;
  onOpen: (entry: Entry) => void;
  onDownload: (entry: Entry) => void;
  /** Null: nothing may be deleted (the role may not change the sandbox). */
  onDelete: ((entry: Entry) => void) | null;
}) {
  if (loading) {
    return (
      <div className="flex flex-col gap-2" aria-busy="true" aria-label={`Loading ${dir}`}>
        {[0, 1, 2, 3].map((i) => (
          <Skeleton key={i} className="h-8 w-full" />
        ))}
      </div>
    );
  }
  if (entries.length === 0) {
    return (
      <div
        data-testid="folder-empty"
        className="rounded-md border border-dashed px-4 py-10 text-center text-sm text-muted-foreground"
      >
        <p className="font-medium text-foreground">This folder is empty</p>
        {onDelete ? <p>Drop files here, or use Upload, New file or New folder.</p> : null}
      </div>
    );
  }
  return (
    <TableScroll>
      <table className="w-full text-sm">
        <caption className="sr-only">Contents of {dir}</caption>
        <thead>
          <tr className="border-b text-left text-xs text-muted-foreground">
            <th scope="col" className="w-full py-2 pr-2 font-medium">
              Name
            </th>
            <th scope="col" className="whitespace-nowrap px-2 py-2 text-right font-medium">
              Size
            </th>
            <th scope="col" className="hidden whitespace-nowrap px-2 py-2 font-medium md:table-cell">
              Modified
            </th>
            <th scope="col" className="py-2 pl-2 text-right font-medium">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {entries.map((e) => (
            <tr
              key={e.path}
              data-testid="file-row"
              data-name={e.name}
              className={cn("border-b last:border-0 hover:bg-muted/50", openPath === e.path && "bg-muted")}
            >
              <td className="max-w-0 py-1 pr-2">
                <button
                  type="button"
                  onClick={() => onOpen(e)}
                  aria-label={e.isDir ? `Open folder ${e.name}` : `Open file ${e.name}`}
                  aria-current={openPath === e.path ? "true" : undefined}
                  className="flex w-full min-w-0 items-center gap-2 rounded-sm py-1 text-left font-mono hover:underline focus-visible:outline-2 focus-visible:outline-ring"
                >
                  {e.isDir ? (
                    <FolderIcon className="shrink-0 text-primary" />
                  ) : (
                    <FileIcon className="shrink-0 text-muted-foreground" />
                  )}
                  <span className="truncate">{e.name}</span>
                </button>
              </td>
              <td className="whitespace-nowrap px-2 py-1 text-right tabular-nums text-muted-foreground">
                {e.isDir ? "—" : formatBytes(e.size)}
              </td>
              <td className="hidden whitespace-nowrap px-2 py-1 text-muted-foreground md:table-cell">
                {formatDateTime(e.modifiedAt)}
              </td>
              <td className="whitespace-nowrap py-1 pl-2 text-right">
                {!e.isDir ? (
                  <Button
                    size="icon"
                    variant="ghost"
                    className="size-8"
                    aria-label={`Download ${e.name}`}
                    onClick={() => onDownload(e)}
                  >
                    <DownloadIcon />
                  </Button>
                ) : null}
                {onDelete ? (
                  <Button
                    size="icon"
                    variant="ghost"
                    className="size-8"
                    aria-label={`Delete ${e.name}`}
                    onClick={() => onDelete(e)}
                  >
                    <TrashIcon />
                  </Button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
