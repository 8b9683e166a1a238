"use client";

import { useId, useState, type RefObject } from "react";
import { cn } from "../../../lib/utils";
import { Button } from "../../ui/button";
import { Input } from "../../ui/input";
import { Label } from "../../ui/label";
import { EMPTY_LIST_STATE, isFiltered, parseMetadataFilter, STATUS_FILTERS, type ListState } from "./list-state";

const selectClass = "h-9 rounded-md border border-input bg-background px-2 text-sm";

interface Props {
  state: ListState;
  /** A filter change: a new history entry, so Back undoes it. */
  onChange: (next: ListState) => void;
  search: string;
  onSearch: (text: string) => void;
  searchRef: RefObject<HTMLInputElement | null>;
  templates: readonly string[];
  regions: readonly string[];
  /** How the `?creator=` chip names its user ("you", a member's name); the id when unknown. */
  creatorLabel: string | null;
  /** The signed-in user's id: the "only mine" toggle is `?creator=<this id>`. */
  viewerId: string | null;
}

/** Search by id, and the server-side filters: status, template, region, metadata key=value. */
export function ListFilters({
  state,
  onChange,
  search,
  onSearch,
  searchRef,
  templates,
  regions,
  creatorLabel,
  viewerId,
}: Props) {
  const ids = { search: useId(), template: useId(), region: useId(), meta: useId(), metaError: useId() };
  const [metaText, setMetaText] = useState("");
  const [metaError, setMetaError] = useState<string | null>(null);
  const set = (patch: Partial<ListState>) => onChange({ ...state, ...patch, cursor: "" });

  const addMetadata = () => {
    const pair = parseMetadataFilter(metaText);
    if (!pair) {
      setMetaError("Write it as key=value, e.g. agent_run=r_123.");
      return;
    }
    setMetaError(null);
    setMetaText("");
    set({ metadata: [...state.metadata.filter(([k]) => k !== pair[0]), pair] });
  };

  const toggleStatus = (s: string) =>
    set({ status: state.status.includes(s) ? state.status.filter((x) => x !== s) : [...state.status, s] });

  return (
    <div className="flex flex-col gap-3">
      <div className="flex flex-wrap items-end gap-3">
        <div className="flex min-w-56 flex-1 flex-col gap-1.5">
          <Label htmlFor={ids.search}>Search by id</Label>
          <Input
            ref={searchRef}
            id={ids.search}
            type="search"
            placeholder="sbx_…   (press / to focus)"
            autoComplete="off"
            spellCheck={false}
            value={search}
            onChange={(e) => onSearch(e.currentTarget.value)}
            className="font-mono"
          />
        </div>
        <div className="flex flex-col gap-1.5">
          <Label htmlFor={ids.template}>Template</Label>
          <select
            id={ids.template}
            className={selectClass}
            value={state.template}
            onChange={(e) => set({ template: e.currentTarget.value })}
          >
            <option value="">Any template</option>
            {[...new Set([...templates, ...(state.template ? [state.template] : [])])].map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </div>
        <div className="flex flex-col gap-1.5">
          <Label htmlFor={ids.region}>Region</Label>
          <select
            id={ids.region}
            className={selectClass}
            value={state.region}
            onChange={(e) => set({ region: e.currentTarget.value })}
          >
            <option value="">Any region</option>
            {[...new Set([...regions, ...(state.region ? [state.region] : [])])].map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </div>
        <form
          className="flex flex-col gap-1.5"
          onSubmit={(e) => {
            e.preventDefault();
            addMetadata();
          }}
        >
          <Label htmlFor={ids.meta}>Metadata</Label>
          <div className="flex gap-2">
            <Input
              id={ids.meta}
              placeholder="key=value"
              className="w-44 font-mono"
              value={metaText}
              aria-invalid={metaError ? true : undefined}
              aria-describedby={metaError ? ids.metaError : undefined}
              onChange={(e) => setMetaText(e.currentTarget.value)}
            />
            <Button type="submit" variant="outline">
              Add filter
            </Button>
          </div>
        </form>
      </div>
      {metaError ? (
        <p id={ids.metaError} className="-mt-1 text-sm text-destructive">
          {metaError}
        </p>
      ) : null}

      <div className="flex flex-wrap items-center gap-2">
        <span id={`${ids.search}-status`} className="text-sm font-medium">
          Status
        </span>
        <div role="group" aria-labelledby={`${ids.search}-status`} className="flex flex-wrap gap-1.5">
          {STATUS_FILTERS.map((s) => {
            const on = state.status.includes(s);
            return (
              <button
                key={s}
                type="button"
                aria-pressed={on}
                onClick={() => toggleStatus(s)}
                className={cn(
                  "h-7 rounded-full border px-3 text-xs font-medium capitalize transition-colors",
                  on
                    ? "border-primary bg-primary text-primary-foreground"
                    : "border-input bg-background hover:bg-accent",
                )}
              >
                {s}
              </button>
            );
          })}
        </div>
        {state.status.length === 0 ? (
          <span className="text-xs text-muted-foreground">(none chosen: all but terminated and expired)</span>
        ) : null}
        {viewerId ? (
          // "Mine" is the creator filter set to the viewer (?creator=<own id>): one filter, one URL form.
          <button
            type="button"
            aria-pressed={state.creator === viewerId}
            onClick={() => set({ creator: state.creator === viewerId ? "" : viewerId })}
            className={cn(
              "h-7 rounded-full border px-3 text-xs font-medium transition-colors sm:ml-auto",
              state.creator === viewerId
                ? "border-primary bg-primary text-primary-foreground"
                : "border-input bg-background hover:bg-accent",
            )}
            data-testid="mine-filter"
          >
            Only sandboxes I created
          </button>
        ) : null}
      </div>

      {state.metadata.length > 0 || isFiltered({ ...state, q: "" }) ? (
        <div className="flex flex-wrap items-center gap-2" aria-label="Active filters" role="group">
          {state.creator ? (
            <span
              className="inline-flex items-center gap-1 rounded-md border bg-muted px-2 py-0.5 text-xs"
              data-testid="creator-filter"
            >
              Created by {creatorLabel ?? <span className="font-mono">{state.creator}</span>}
              <button
                type="button"
                aria-label={`Remove the filter: created by ${creatorLabel ?? state.creator}`}
                className="ml-1 rounded px-1 text-muted-foreground hover:bg-accent hover:text-foreground"
                onClick={() => set({ creator: "" })}
              >
                ×
              </button>
            </span>
          ) : null}
          {state.metadata.map(([k, v]) => (
            <span
              key={k}
              className="inline-flex items-center gap-1 rounded-md border bg-muted px-2 py-0.5 font-mono text-xs"
            >
              metadata[{k}]={v}
              <button
                type="button"
                aria-label={`Remove metadata filter ${k}=${v}`}
                className="ml-1 rounded px-1 text-muted-foreground hover:bg-accent hover:text-foreground"
                onClick={() => set({ metadata: state.metadata.filter(([m]) => m !== k) })}
              >
                ×
              </button>
            </span>
          ))}
          <Button
            variant="link"
            size="sm"
            className="h-auto px-0"
            onClick={() => onChange({ ...EMPTY_LIST_STATE, q: state.q })}
          >
            Clear filters
          </Button>
        </div>
      ) : null}
    </div>
  );
}
