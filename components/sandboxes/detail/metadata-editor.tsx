"use client";

import { useState } from "react";
import type { Sandbox } from "../../../lib/orkestr/schemas/sandboxes";
import { Badge } from "../../ui/badge";
import { Button } from "../../ui/button";
import { buildCreateRequest, initialFormState, newRow, type KeyValueRow } from "../create/create-request";
import { KeyValueEditor } from "../create/key-value-editor";
import { useSandboxEdits } from "../../../lib/queries/sandbox-lifecycle";

function rowsOf(metadata: Sandbox["metadata"]): KeyValueRow[] {
  const entries = Object.entries(metadata ?? {});
  return entries.length
    ? entries.map(([k, v]) => newRow(k, typeof v === "string" ? v : JSON.stringify(v)))
    : [newRow()];
}

/** Metadata as chips; "Edit" turns them into rows, saved with PATCH (the whole map is replaced). */
export function MetadataEditor({ sandbox, editable }: { sandbox: Sandbox; editable: boolean }) {
  const { updateMetadata } = useSandboxEdits(sandbox.id);
  const [rows, setRows] = useState<KeyValueRow[] | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const entries = Object.entries(sandbox.metadata ?? {});

  if (rows) {
    const save = () => {
      // The create form's rules for metadata rows (names, duplicates, lengths).
      const { errors: all, draft } = buildCreateRequest(
        { ...initialFormState(null), env: [], metadata: rows },
        { limits: null, volumes: [] },
      );
      const rowErrors = Object.fromEntries(Object.entries(all).filter(([k]) => k.startsWith("metadata")));
      setErrors(rowErrors);
      if (Object.keys(rowErrors).length) return;
      updateMetadata.mutate(draft.metadata ?? {}, { onSuccess: () => setRows(null) });
    };
    return (
      <div className="flex flex-col gap-3">
        <KeyValueEditor
          name="metadata"
          label="Label"
          rows={rows}
          onChange={setRows}
          errors={errors}
          keyPlaceholder="key"
          valuePlaceholder="value"
        />
        <div className="flex gap-2">
          <Button size="sm" onClick={save} disabled={updateMetadata.isPending}>
            {updateMetadata.isPending ? "Saving…" : "Save metadata"}
          </Button>
          <Button size="sm" variant="ghost" onClick={() => setRows(null)}>
            Cancel
          </Button>
        </div>
      </div>
    );
  }

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
        <Button size="sm" variant="outline" onClick={() => setRows(rowsOf(sandbox.metadata))}>
          Edit metadata
        </Button>
      ) : null}
    </div>
  );
}
