import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ulid } from "../src/lib/ids.js";
import { openDb, type Db } from "../src/store/db.js";
import { pageNewestFirst, type Condition, type PageRequest } from "../src/store/paging.js";

/** The one cursor pager every list route uses (store/paging.ts), on a real engine database. */

let dir: string;
let db: Db;
/** Newest first, as a list shows them. */
let ids: string[];
const SAME_MS = Date.UTC(2026, 0, 1);

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "paging-"));
  db = openDb(dir);
  db.prepare("INSERT INTO accounts(id, name, created_at) VALUES ('acc_other', 'other', 0)").run();
  const insert = db.prepare(
    "INSERT INTO snapshots(id, account_id, name, sandbox_id, template, size, region, status, created_at) VALUES (?, ?, ?, 'sbx_X', 'base', 'small', 'eu', ?, ?)",
  );
  // Seven rows created in the same millisecond (ties on created_at: only the id orders them), one
  // earlier and one later, plus another account's row that no page may show.
  const made: string[] = [];
  const add = (ms: number, status = "ready") => {
    const id = `snap_${ulid(ms)}`;
    insert.run(id, "acc_default", id, status, ms);
    made.push(id);
  };
  add(SAME_MS - 1000);
  for (let i = 0; i < 7; i++) add(SAME_MS, i % 2 ? "creating" : "ready");
  add(SAME_MS + 1000);
  insert.run(`snap_${ulid(SAME_MS)}`, "acc_other", "theirs", "ready", SAME_MS);
  ids = made.sort().reverse();
});

afterAll(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const mine: Condition[] = [["account_id = ?", "acc_default"]];

function walk(conditions: Condition[], limit: number): { pages: string[][]; nexts: (string | null)[] } {
  const pages: string[][] = [];
  const nexts: (string | null)[] = [];
  let req: PageRequest = { limit };
  for (;;) {
    const page = pageNewestFirst<{ id: string }>(db, "snapshots", conditions, req);
    pages.push(page.items.map((r) => r.id));
    nexts.push(page.next);
    if (!page.next) return { pages, nexts };
    req = { limit, cursor: page.next };
  }
}

describe("pageNewestFirst", () => {
  it("walks every row exactly once, newest first, rows of the same millisecond included", () => {
    for (const limit of [1, 2, 3, 4, 9, 50]) {
      const { pages } = walk(mine, limit);
      expect(pages.flat()).toEqual(ids);
      for (const p of pages.slice(0, -1)) expect(p).toHaveLength(limit);
    }
  });

  it("knows the last page without a second query: a full last page has no next cursor", () => {
    const { pages, nexts } = walk(mine, 3);
    expect(pages.map((p) => p.length)).toEqual([3, 3, 3]);
    expect(nexts).toEqual([ids[2], ids[5], null]);
  });

  it("the next cursor is the last id of the page, and the next page starts right after it", () => {
    const first = pageNewestFirst<{ id: string }>(db, "snapshots", mine, { limit: 4 });
    expect(first.next).toBe(ids[3]);
    const second = pageNewestFirst<{ id: string }>(db, "snapshots", mine, { limit: 4, cursor: first.next! });
    expect(second.items[0]!.id).toBe(ids[4]);
  });

  it("applies the conditions on every page (other accounts' rows and filtered rows never show)", () => {
    const ready: Condition[] = [...mine, ["status = ?", "ready"]];
    const readyIds = (
      db
        .prepare("SELECT id FROM snapshots WHERE account_id = 'acc_default' AND status = 'ready'")
        .pluck()
        .all() as string[]
    )
      .sort()
      .reverse();
    expect(walk(ready, 2).pages.flat()).toEqual(readyIds);
    expect(walk([], 100).pages.flat()).toHaveLength(ids.length + 1);
  });

  it("a cursor is a position: one naming no row pages from where it would sort", () => {
    const removed = `snap_${ulid(SAME_MS + 500)}`;
    const after = pageNewestFirst<{ id: string }>(db, "snapshots", mine, { limit: 50, cursor: removed });
    expect(after.items.map((r) => r.id)).toEqual(ids.slice(1));
    expect(after.next).toBeNull();
  });

  it("a malformed cursor is data, not SQL: it sorts somewhere and pages from there", () => {
    // "zzz" sorts after every "snap_…" id: the walk starts at the newest row, as with no cursor.
    const top = pageNewestFirst<{ id: string }>(db, "snapshots", mine, { limit: 5, cursor: "zzz" });
    expect(top).toEqual({ items: expect.any(Array), next: ids[4] });
    expect(top.items.map((r) => r.id)).toEqual(ids.slice(0, 5));
    // An injection attempt is a bound string like any other: "'" sorts before every id, so no row is older.
    expect(pageNewestFirst(db, "snapshots", mine, { limit: 50, cursor: "' OR 1=1 --" })).toEqual({
      items: [],
      next: null,
    });
    expect(db.prepare("SELECT COUNT(*) FROM snapshots").pluck().get()).toBe(ids.length + 1);
  });
});
