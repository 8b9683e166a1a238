"use client";

import dynamic from "next/dynamic";
import { useState } from "react";
import type { Sandbox } from "../../../lib/orkestr/schemas/sandboxes";
import { Badge } from "../../ui/badge";
import { Button } from "../../ui/button";

// The editing rows (the create form's row editor and rules, ~1.5 KiB gz) load on first use; pointing
// at or focusing "Edit metadata" starts the download.
const loadForm = () => import("./metadata-form").then((m) => m.MetadataForm);
const MetadataForm = dynamic(loadForm, { ssr: false });

/** Metadata as chips; "Edit" turns them into rows, saved with PATCH (the whole map is replaced). */
export function MetadataEditor({ sandbox, editable }: { sandbox: Sandbox; editable: boolean }) {
  const [editing, setEditing] = useState(false);
  const entries = Object.entries(sandbox.metadata ?? {});

  if (editing) return <MetadataForm sandbox={sandbox} onDone={() => setEditing(false)} />;

  return (
    <div className="flex flex-wrap items-center gap-2">
      {entries.length ? (
        <ul aria-label="Metadata" className="flex flex-wrap gap-1.5">
          {entries.map(([k, v]) => (
            <li key={k}>
              <Badge variant="secondary" className="font-mono font-normal">
                {k}={typeof v === "string" ? v : JSON.stringify(v)}
              </Badge>
            </li>
          ))}
        </ul>
      ) : (
        <span className="text-sm text-muted-foreground">None</span>
      )}
      {editable ? (
        <Button
          size="sm"
          variant="outline"
          onPointerEnter={() => void loadForm()}
          onFocus={() => void loadForm()}
          onClick={() => setEditing(true)}
        >
          Edit metadata
        </Button>
      ) : null}
    </div>
  );
}
