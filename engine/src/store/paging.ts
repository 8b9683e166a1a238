import type { Db } from "./db.js";

/** A list request: at most `limit` rows after `cursor` (the last id of the page before). */
export interface PageRequest {
  limit: number;
  cursor?: string;
}

/** One page of rows and the cursor of the next one (null on the last page). */
export interface Page<Row> {
  items: Row[];
  next: string | null;
}

/** A WHERE condition and its bound arguments: `["region = ?", region]`. */
export type Condition = readonly [sql: string, ...args: unknown[]];

/** The tables listed with a cursor (their primary key is a ULID id). */
export type PagedTable = "sandboxes" | "snapshots" | "volumes" | "templates" | "webhooks" | "webhook_deliveries";

/**
 * One page of `table`, newest first: keyset paging on the primary key. Ids are ULIDs, which sort
 * by creation time and, being unique, also order rows created in the same millisecond, so a page
 * never repeats or skips a row however many are inserted meanwhile (an OFFSET would). The cursor
 * is a position in that order, not a row that must exist: one that names no row (deleted since,
 * or garbage) pages from where it would sort, and it is always a bound parameter, never SQL.
 *
 * One row more than asked for is read, so the last page is known without a second query.
 */
export function pageNewestFirst<Row extends { id: string }>(
  db: Db,
  table: PagedTable,
  conditions: readonly Condition[],
  page: PageRequest,
): Page<Row> {
  const all: Condition[] = [...conditions];
  if (page.cursor) all.push(["id < ?", page.cursor]);
  const where = all.length ? `WHERE ${all.map(([sql]) => sql).join(" AND ")}` : "";
  const rows = db
    .prepare(`SELECT * FROM ${table} ${where} ORDER BY id DESC LIMIT ?`)
    .all(...all.flatMap(([, ...args]) => args), page.limit + 1) as Row[];
  const items = rows.slice(0, page.limit);
  return { items, next: rows.length > page.limit ? items[items.length - 1]!.id : null };
}
