"use client";

import { memo, useEffect, useMemo, useRef, type RefObject } from "react";
import type { Sandbox } from "../../../lib/orkestr/schemas/sandboxes";
import { creatorName, userMetadata } from "../../../lib/sandbox-creator";
import { cn } from "../../../lib/utils";
import { StatusBadge } from "../status-badge";
import { SandboxIdCell } from "./copy-id";
import { CreatedCell, ExpiresCell } from "./countdown";
import { MetadataChips } from "./metadata-chips";
import type { TelemetryStore } from "./row-telemetry";
import { CostCell, IdleFlag, UsageCell } from "./telemetry-cells";
import { useRowWindow } from "./use-row-window";
import { useTeamRouter } from "../../layout/team-link";

const ROW_HEIGHT = 44;
/**
 * Fixed column widths: rows are positioned absolutely, so header and cells share one grid template.
 * The cost's holds a fresh sandbox's "€0.000012" and "< €0.000001" (lib/format.ts formatEur).
 */
const GRID =
  "grid grid-cols-[2rem_11.5rem_6.5rem_8.5rem_minmax(6rem,1fr)_7rem_5rem_7.5rem_6rem] items-center gap-x-2 px-2";
const COLUMNS = [
  "Id",
  "Status",
  "Template · size · network · region",
  "Metadata",
  // When, and by whom (a second line, not a column of its own: the live cost stays in view at 1280 px).
  "Created · by",
  "Expires",
  "CPU · memory",
  "Cost so far",
] as const;
/** Start loading the next page this many rows before the end. */
const PREFETCH_ROWS = 30;

interface Props {
  rows: readonly Sandbox[];
  selected: ReadonlySet<string>;
  onToggle: (id: string, on: boolean) => void;
  onToggleAll: (on: boolean) => void;
  /** Null until the sampler has loaded (components/sandboxes/list/sandbox-list.tsx). */
  telemetry: TelemetryStore | null;
  /** More pages exist upstream; the table asks for the next when scrolled near the end. */
  canLoadMore: boolean;
  onLoadMore: () => void;
  scrollRef?: RefObject<HTMLDivElement | null>;
  /** Rows can be selected for the bulk actions (false for a role that may not change sandboxes). */
  selectable?: boolean;
  /** The "Created · by" column's names: the viewer's user id, and the team's members (id → name) from the server. */
  viewerId?: string | null;
  members?: Readonly<Record<string, string>>;
  /** The team's API tokens (id → name), for "via API token <name>". */
  tokens?: Readonly<Record<string, string>>;
}

const NO_MEMBERS: Readonly<Record<string, string>> = {};

/**
 * The virtualized table: only the rows in view (plus a few) are in the DOM, so 10,000 rows scroll
 * and filter as fast as 10. ARIA table roles with aria-rowcount/aria-rowindex tell assistive
 * technology the full size.
 */
export function SandboxTable({
  rows,
  selected,
  onToggle,
  onToggleAll,
  telemetry,
  canLoadMore,
  onLoadMore,
  scrollRef,
  selectable = true,
  viewerId = null,
  members = NO_MEMBERS,
  tokens = NO_MEMBERS,
}: Props) {
  const ownRef = useRef<HTMLDivElement>(null);
  const parentRef = scrollRef ?? ownRef;
  // While scrolling, rows render without their live cells (telemetry, clocks): a fast fling or a
  // scrollbar drag replaces every row per frame, and the light rows keep each frame short.
  const { first, last, totalHeight, isScrolling: scrolling } = useRowWindow(parentRef, rows.length, ROW_HEIGHT, 4);

  // Tell the telemetry store which rows are on screen (it waits for scrolling to settle).
  useEffect(() => {
    const onScreen: { id: string; status: string }[] = [];
    for (let i = first; i <= last; i++) {
      const row = rows[i];
      if (row) onScreen.push({ id: row.id, status: row.status });
    }
    telemetry?.setVisible(onScreen);
  }, [first, last, rows, telemetry]);

  useEffect(() => {
    if (canLoadMore && last >= rows.length - PREFETCH_ROWS) onLoadMore();
  }, [canLoadMore, last, rows.length, onLoadMore]);

  const { allSelected, someSelected } = useMemo(() => {
    if (selected.size === 0 || rows.length === 0) return { allSelected: false, someSelected: false };
    const all = rows.every((r) => selected.has(r.id));
    return { allSelected: all, someSelected: !all && rows.some((r) => selected.has(r.id)) };
  }, [rows, selected]);
  const router = useTeamRouter();

  return (
    <div
      ref={parentRef}
      className="relative h-[max(24rem,calc(100dvh-22rem))] overflow-auto rounded-lg border bg-card"
      data-testid="sandbox-table-scroller"
    >
      <div role="table" aria-label="Sandboxes" aria-rowcount={rows.length + 1} className="min-w-max text-sm">
        <div role="rowgroup" className="sticky top-0 z-10 border-b bg-card">
          <div role="row" aria-rowindex={1} className={cn(GRID, "h-10 text-xs font-medium text-muted-foreground")}>
            <div role="columnheader" className="flex justify-center">
              {selectable ? (
                <input
                  type="checkbox"
                  aria-label={`Select all ${rows.length} shown`}
                  className="size-4 accent-primary"
                  checked={allSelected}
                  ref={(el) => {
                    if (el) el.indeterminate = someSelected;
                  }}
                  onChange={(e) => onToggleAll(e.currentTarget.checked)}
                />
              ) : (
                <span className="sr-only">No selection</span>
              )}
            </div>
            {COLUMNS.map((c) => (
              <div key={c} role="columnheader" className="leading-tight">
                {c}
              </div>
            ))}
          </div>
        </div>
        <div
          role="rowgroup"
          className="relative"
          style={{ height: totalHeight }}
          // One client-side navigation handler for every row's id link (plain <a>s: cheaper to mount than
          // a next/link per row); modified clicks keep the browser's behaviour (new tab, window).
          onClick={(e) => {
            const a = (e.target as HTMLElement).closest<HTMLAnchorElement>("a[data-row-link]");
            if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
            e.preventDefault();
            router.push(a.getAttribute("href")!);
          }}
        >
          {rows.slice(first, last + 1).map((row, i) => (
            <SandboxRow
              key={row.id}
              row={row}
              index={first + i}
              top={(first + i) * ROW_HEIGHT}
              selected={selected.has(row.id)}
              onToggle={selectable ? onToggle : null}
              live={!scrolling}
              viewerId={viewerId}
              members={members}
              tokens={tokens}
            />
          ))}
        </div>
      </div>
    </div>
  );
}

interface RowProps {
  row: Sandbox;
  index: number;
  top: number;
  selected: boolean;
  /** Null: rows cannot be selected (the role may not change sandboxes). */
  onToggle: ((id: string, on: boolean) => void) | null;
  /** False while scrolling: the live cells wait until the table comes to rest. */
  live: boolean;
  viewerId: string | null;
  members: Readonly<Record<string, string>>;
  tokens: Readonly<Record<string, string>>;
}

const pending = <span className="text-muted-foreground">…</span>;

/**
 * "via API token <name>" / "via MCP (<name>)" in a column a few words wide: a short badge that
 * always shows ("API token", "MCP") beside the creator's name, which truncates first; the full text
 * is its tooltip (the row's title above) and what a screen reader reads (sr-only), and the detail
 * page's Created by field shows it whole. The badge's words are CSS content with empty alt text
 * (globals.css .via-badge), so the cell's text and accessible name are the one sentence
 * "You via API token <name>", not "You API token via API token <name>".
 */
function ViaBadge({ via }: { via: string }) {
  return (
    <span
      className="via-badge shrink-0 rounded border border-border px-1 text-[10px] leading-[14px] text-muted-foreground"
      data-short={via.startsWith("via MCP") ? "MCP" : "API token"}
      title={via}
    >
      <span className="sr-only"> {via}</span>
    </span>
  );
}

const SandboxRow = memo(function SandboxRow({
  row,
  index,
  top,
  selected,
  onToggle,
  live,
  viewerId,
  members,
  tokens,
}: RowProps) {
  const creator = creatorName(row.metadata, viewerId, members, tokens);
  return (
    <div
      role="row"
      aria-rowindex={index + 2}
      aria-selected={selected}
      data-sandbox-id={row.id}
      className={cn(GRID, "absolute inset-x-0 border-b border-border/60 hover:bg-muted/50", selected && "bg-accent/60")}
      // `top`, not a transform: no compositing layer per row (costly with software rendering), and
      // containment keeps a row's style and layout work inside it.
      style={{ height: ROW_HEIGHT, top, contain: "strict" }}
    >
      <div role="cell" className="flex justify-center">
        {onToggle ? (
          <input
            type="checkbox"
            aria-label={`Select ${row.id}`}
            className="size-4 accent-primary"
            checked={selected}
            onChange={(e) => onToggle(row.id, e.currentTarget.checked)}
          />
        ) : null}
      </div>
      <div role="cell" className="min-w-0">
        <SandboxIdCell id={row.id} />
      </div>
      <div role="cell" className="flex items-center gap-1">
        <StatusBadge status={row.status} />
        {live ? <IdleFlag id={row.id} status={row.status} /> : null}
      </div>
      <div role="cell" className="flex min-w-0 flex-col leading-tight">
        <span className="truncate" title={row.template ?? undefined}>
          {row.template ?? "—"}
        </span>
        <span className="truncate text-xs text-muted-foreground">
          {row.size ?? "—"} · {row.network ?? "—"} · {row.region ?? "—"}
        </span>
      </div>
      <div role="cell" className="min-w-0">
        {/* Baton's stamp is shown as "Created · by", not as a chip. */}
        <MetadataChips metadata={userMetadata(row.metadata)} />
      </div>
      <div role="cell" className="flex min-w-0 flex-col text-xs leading-tight">
        <span>{live ? <CreatedCell createdAt={row.created_at} /> : pending}</span>
        <span
          data-testid="created-by"
          className={cn(
            "flex min-w-0 items-center gap-1",
            (creator.kind === "outside" || creator.kind === "former") && "text-muted-foreground",
          )}
          title={
            creator.kind === "outside"
              ? "Made outside Baton (an SDK or the API with a token): it carries no creator stamp."
              : creator.kind === "former"
                ? `Made by someone who is no longer a member of this team${creator.via ? `, ${creator.via}` : ""}.`
                : `Created by ${creator.text}${creator.via ? ` ${creator.via}` : ""}`
          }
        >
          <span className="min-w-0 truncate">{creator.text}</span>
          {creator.via ? <ViaBadge via={creator.via} /> : null}
        </span>
      </div>
      <div role="cell" className="text-xs tabular-nums">
        {live ? <ExpiresCell status={row.status} expiresAt={row.expires_at} /> : pending}
      </div>
      <div role="cell">{live ? <UsageCell id={row.id} status={row.status} /> : pending}</div>
      <div role="cell" className="text-xs">
        {live ? <CostCell id={row.id} /> : pending}
      </div>
    </div>
  );
});
