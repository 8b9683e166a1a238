"use client";

import type { ReactNode } from "react";
import { tableCsv } from "../../lib/usage/csv";
import { csvFileName, type UsageTable } from "../../lib/usage/tables";
import { cn } from "../../lib/utils";
import { TeamLink as Link } from "../layout/team-link";
import { Button } from "../ui/button";
import { TableScroll } from "../ui/table";

/** Saves the table as CSV: built here from the rows on screen, not fetched again. */
export function downloadCsv(table: UsageTable, range: { from: string; to: string }) {
  const blob = new Blob([tableCsv(table)], { type: "text/csv;charset=utf-8" });
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = csvFileName(table, range.from, range.to);
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1_000);
}

export function CsvButton({ table, range }: { table: UsageTable; range: { from: string; to: string } }) {
  return (
    <Button
      size="sm"
      variant="outline"
      onClick={() => downloadCsv(table, range)}
      data-testid={`usage-csv-${table.name}`}
      aria-label={`Export CSV: ${table.caption}`}
    >
      Export CSV
    </Button>
  );
}

/**
 * A usage table as the model says: each cell's text shown, its exported value in data-value (the
 * e2e test reads both against the CSV). `headerCell` lets a page put a control (a sort) in a header.
 */
export function UsageTableView({
  table,
  headerCell,
  sortedColumn,
  firstColumnIsHeader = true,
}: {
  table: UsageTable;
  /** The column the rows are sorted by (most first): its header says so (aria-sort). */
  sortedColumn?: string;
  headerCell?: (column: string, index: number) => ReactNode;
  firstColumnIsHeader?: boolean;
}) {
  return (
    // Focusable and named: on a phone the table scrolls sideways inside this box, by keyboard too.
    <TableScroll className="rounded-lg border" tabIndex={0} role="region" aria-label={table.caption}>
      <table className="w-full text-sm" data-testid={`usage-table-${table.name}`}>
        <caption className="sr-only">{table.caption}</caption>
        <thead className="bg-muted/50 text-left text-xs text-muted-foreground">
          <tr>
            {table.columns.map((c, i) => (
              <th
                key={c}
                scope="col"
                aria-sort={sortedColumn === c ? "descending" : undefined}
                className={cn(
                  "px-3 py-2 font-medium whitespace-nowrap",
                  i > 0 && table.rows[0]?.cells[i]?.numeric && "text-right",
                )}
              >
                {headerCell ? headerCell(c, i) : c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {table.rows.map((row) => (
            <tr key={row.key} className="border-t" data-row={row.key}>
              {row.cells.map((cell, i) => {
                const content = cell.href ? (
                  <Link href={cell.href} className="font-mono text-xs underline-offset-4 hover:underline">
                    {cell.text}
                  </Link>
                ) : (
                  cell.text
                );
                const className = cn(
                  "px-3 py-2",
                  cell.numeric ? "text-right tabular-nums whitespace-nowrap" : "break-words",
                );
                return i === 0 && firstColumnIsHeader ? (
                  <th key={i} scope="row" className={cn(className, "text-left font-normal")} data-value={cell.value}>
                    {content}
                  </th>
                ) : (
                  <td key={i} className={className} data-value={cell.value}>
                    {content}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
