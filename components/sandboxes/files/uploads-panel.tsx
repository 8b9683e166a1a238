"use client";

import { Button } from "../../ui/button";
import { formatBytes } from "../../../lib/format";
import type { Upload } from "./use-uploads";

const STATUS_TEXT: Record<Upload["status"], string> = {
  queued: "Waiting",
  uploading: "Uploading",
  done: "Uploaded",
  error: "Failed",
  cancelled: "Cancelled",
};

/** The upload queue with a progress bar per file; failures keep the server's reason in view. */
export function UploadsPanel({
  uploads,
  onCancel,
  onClear,
}: {
  uploads: Upload[];
  onCancel: (key: number) => void;
  onClear: () => void;
}) {
  if (uploads.length === 0) return null;
  const finished = uploads.some((u) => u.status !== "queued" && u.status !== "uploading");
  return (
    <section aria-label="Uploads" className="flex flex-col gap-2 rounded-md border bg-muted/40 p-3">
      <div className="flex items-center justify-between gap-2">
        <h3 className="text-sm font-semibold">Uploads</h3>
        {finished ? (
          <Button size="sm" variant="ghost" onClick={onClear}>
            Clear finished
          </Button>
        ) : null}
      </div>
      <ul className="flex flex-col gap-2">
        {uploads.map((u) => {
          const pct = u.size > 0 ? Math.min(100, Math.round((u.loaded / u.size) * 100)) : u.status === "done" ? 100 : 0;
          return (
            <li key={u.key} data-testid="upload-row" data-status={u.status} className="flex flex-col gap-1">
              <div className="flex items-center justify-between gap-2 text-sm">
                <span className="min-w-0 truncate font-mono" title={u.path}>
                  {u.name}
                </span>
                <span className="flex shrink-0 items-center gap-2 text-xs text-muted-foreground">
                  <span>
                    {STATUS_TEXT[u.status]}
                    {u.status === "uploading"
                      ? ` ${pct}% · ${formatBytes(u.loaded)} of ${formatBytes(u.size)}`
                      : ` · ${formatBytes(u.size)}`}
                  </span>
                  {u.status === "queued" || u.status === "uploading" ? (
                    <Button
                      size="sm"
                      variant="ghost"
                      className="h-6 px-2"
                      onClick={() => onCancel(u.key)}
                      aria-label={`Cancel upload of ${u.name}`}
                    >
                      Cancel
                    </Button>
                  ) : null}
                </span>
              </div>
              <progress
                className="h-1.5 w-full overflow-hidden rounded-full [&::-webkit-progress-bar]:bg-muted [&::-webkit-progress-value]:bg-primary [&::-moz-progress-bar]:bg-primary"
                max={100}
                value={u.status === "done" ? 100 : pct}
                aria-label={`Upload of ${u.name}`}
              />
              {u.status === "error" ? (
                <p role="alert" className="text-xs text-destructive">
                  {u.error}
                </p>
              ) : null}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
