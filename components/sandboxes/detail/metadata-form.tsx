"use client";

import { useState } from "react";
import type { Sandbox } from "../../../lib/orkestr/schemas/sandboxes";
import { useSandboxEdits } from "../../../lib/queries/sandbox-lifecycle";
import { Button } from "../../ui/button";
import { buildCreateRequest, initialFormState, newRow, type KeyValueRow } from "../create/create-request";
import { KeyValueEditor } from "../create/key-value-editor";
import { stampOf, userMetadata } from "../../../lib/sandbox-creator";

function rowsOf(metadata: Sandbox["metadata"]): KeyValueRow[] {
  // Baton's creator stamp (baton.*) is not the user's to edit: the server keeps it on save.
  const entries = Object.entries(userMetadata(metadata));
  return entries.length
    ? entries.map(([k, v]) => newRow(k, typeof v === "string" ? v : JSON.stringify(v)))
    : [newRow()];
}

/**
 * The metadata as editable rows, saved with PATCH (the whole map is replaced). Loaded when "Edit
 * metadata" is first pressed (./metadata-editor.tsx): it brings the create form's row editor and rules.
 */
export function MetadataForm({ sandbox, onDone }: { sandbox: Sandbox; onDone: () => void }) {
  const { updateMetadata } = useSandboxEdits(sandbox.id);
  const [rows, setRows] = useState<KeyValueRow[]>(() => rowsOf(sandbox.metadata));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const stamp = Object.keys(stampOf(sandbox.metadata));

  const save = () => {
    // The create form's rules for metadata rows (names, duplicates, lengths).
    const { errors: all, draft } = buildCreateRequest(
      { ...initialFormState(null), env: [], metadata: rows },
      { limits: null, volumes: [] },
    );
    const rowErrors = Object.fromEntries(Object.entries(all).filter(([k]) => k.startsWith("metadata")));
    setErrors(rowErrors);
    if (Object.keys(rowErrors).length) return;
    updateMetadata.mutate(draft.metadata ?? {}, { onSuccess: onDone });
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
      {stamp.length ? (
        <p className="text-xs text-muted-foreground">
          {stamp.map((k, i) => (
            <span key={k}>
              {i ? " and " : ""}
              <span className="font-mono">{k}</span>
            </span>
          ))}{" "}
          {stamp.length > 1 ? "are" : "is"} Baton&apos;s record of who created this sandbox: kept as is when you save.
        </p>
      ) : null}
      <div className="flex gap-2">
        <Button size="sm" onClick={save} disabled={updateMetadata.isPending}>
          {updateMetadata.isPending ? "Saving…" : "Save metadata"}
        </Button>
        <Button size="sm" variant="ghost" onClick={onDone}>
          Cancel
        </Button>
      </div>
    </div>
  );
}
