// CSV for the /usage page's exports: RFC 4180 (quoted where needed, CRLF line ends), built in the
// browser from the same table models the page renders (./tables.ts), so a file holds exactly the
// rows and columns on screen. Pure and client-safe.

import type { UsageTable } from "./tables";

/**
 * One field: quoted when it holds a comma, quote or line break. A text that a spreadsheet would run
 * as a formula (=, +, -, @, tab or CR first) gets a leading apostrophe; numbers are left alone.
 */
export function csvField(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) && !/^-?\d+(\.\d+)?$/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function csvLine(fields: readonly string[]): string {
  return fields.map(csvField).join(",");
}

/** The table as CSV: its columns, then one line per row of each cell's exported value. */
export function tableCsv(table: UsageTable): string {
  return [csvLine(table.columns), ...table.rows.map((row) => csvLine(row.cells.map((c) => c.value)))]
    .map((line) => `${line}\r\n`)
    .join("");
}

/** Reads CSV text back into rows of fields (the e2e test and unit tests use it to compare). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let field = "";
  let row: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") {
      row.push(field);
      field = "";
    } else if (ch === "\r" && text[i + 1] === "\n") {
      // The line ends at the \n.
    } else if (ch === "\n") {
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
    } else field += ch;
  }
  if (field !== "" || row.length) rows.push([...row, field]);
  return rows;
}
