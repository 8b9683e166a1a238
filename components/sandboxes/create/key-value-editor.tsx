"use client";

import { useState } from "react";
import { Button } from "../../ui/button";
import { Input } from "../../ui/input";
import { newRow, type KeyValueRow } from "./create-request";
import { FieldError } from "./form-field";

/**
 * Rows of name = value (env or metadata). With `secret`, values are masked like passwords, each
 * with its own show/hide toggle, and never autofilled or remembered by the browser.
 */
export function KeyValueEditor({
  name,
  label,
  rows,
  onChange,
  errors,
  secret = false,
  keyPlaceholder,
  valuePlaceholder,
}: {
  /** "env" or "metadata": ids and error keys are `${name}.${rowId}`. */
  name: string;
  label: string;
  rows: KeyValueRow[];
  onChange: (rows: KeyValueRow[]) => void;
  errors: Record<string, string>;
  secret?: boolean;
  keyPlaceholder: string;
  valuePlaceholder: string;
}) {
  const [revealed, setRevealed] = useState<Record<string, boolean>>({});
  const update = (rowId: string, patch: Partial<KeyValueRow>) =>
    onChange(rows.map((r) => (r.rowId === rowId ? { ...r, ...patch } : r)));
  const remove = (rowId: string) => {
    const rest = rows.filter((r) => r.rowId !== rowId);
    onChange(rest.length ? rest : [newRow()]);
  };
  return (
    <div className="flex flex-col gap-2">
      {rows.map((row, index) => {
        const error = errors[`${name}.${row.rowId}`];
        const errorId = `${name}-${row.rowId}-error`;
        const shown = !secret || revealed[row.rowId];
        return (
          <div key={row.rowId} className="flex flex-col gap-1">
            <div className="flex flex-wrap items-center gap-2 sm:flex-nowrap">
              <Input
                aria-label={`${label} ${index + 1} name`}
                id={`${name}-${row.rowId}-key`}
                value={row.key}
                placeholder={keyPlaceholder}
                onChange={(e) => update(row.rowId, { key: e.target.value })}
                aria-invalid={error ? true : undefined}
                aria-describedby={error ? errorId : undefined}
                autoComplete="off"
                spellCheck={false}
                className="font-mono sm:w-2/5"
              />
              <span aria-hidden="true" className="hidden text-muted-foreground sm:inline">
                =
              </span>
              <Input
                aria-label={`${label} ${index + 1} value`}
                id={`${name}-${row.rowId}-value`}
                type={shown ? "text" : "password"}
                value={row.value}
                placeholder={valuePlaceholder}
                onChange={(e) => update(row.rowId, { value: e.target.value })}
                autoComplete={secret ? "new-password" : "off"}
                spellCheck={false}
                className="font-mono"
              />
              {secret ? (
                <Button
                  variant="outline"
                  size="sm"
                  aria-pressed={!!revealed[row.rowId]}
                  aria-label={`${revealed[row.rowId] ? "Hide" : "Show"} value ${index + 1}`}
                  onClick={() => setRevealed((r) => ({ ...r, [row.rowId]: !r[row.rowId] }))}
                >
                  {revealed[row.rowId] ? "Hide" : "Show"}
                </Button>
              ) : null}
              <Button
                variant="ghost"
                size="sm"
                aria-label={`Remove ${label.toLowerCase()} ${index + 1}`}
                onClick={() => remove(row.rowId)}
              >
                Remove
              </Button>
            </div>
            <FieldError id={errorId} error={error} />
          </div>
        );
      })}
      <div>
        <Button variant="outline" size="sm" onClick={() => onChange([...rows, newRow()])}>
          Add {label.toLowerCase()}
        </Button>
      </div>
      <FieldError id={`${name}-error`} error={errors[name]} />
    </div>
  );
}
