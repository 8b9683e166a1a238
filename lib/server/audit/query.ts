import "server-only";
import { auditDateRange, auditFilterProblem, type AuditFilter } from "../../audit-query";
import { AUDIT_COLUMNS, auditEventFromRow, type AuditEvent } from "../db/audit";
import type { Db } from "../db/index";
import { isPostgres } from "../db/util";
import { sql } from "kysely";
import { AppError } from "../errors";

// A team's audit log, filtered and paged newest first by the keyset (created_at, id): every page is
// one index range scan, however deep (migration 0005 has an index per filter ending in that key).

export const AUDIT_PAGE = { default: 50, max: 500 } as const;

/** The opaque cursor: the last row's (created_at, id). */
export function encodeAuditCursor(e: Pick<AuditEvent, "createdAt" | "id">): string {
  return Buffer.from(`${e.createdAt.getTime()}:${e.id}`, "utf8").toString("base64url");
}

export function decodeAuditCursor(cursor: string): { createdAt: number; id: string } {
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const m = /^(\d{1,16}):([A-Za-z0-9_-]{1,100})$/.exec(text);
  if (!m)
    throw new AppError("validation_error", "The cursor is not one this list gave out; start from the first page.");
  return { createdAt: Number(m[1]), id: m[2]! };
}

export interface AuditQuery {
  teamId: string;
  filter: AuditFilter;
  cursor?: string | null;
  limit?: number;
}

export interface AuditPage {
  items: AuditEvent[];
  nextCursor: string | null;
}

type Column = "action" | "actor_email" | "user_id" | "target_type" | "target_id" | "result";

/**
 * The filtered query without its order and paging (shared by the list and the export).
 *
 * With several filters, the index of the most selective one must drive the scan (it is walked in
 * (created_at, id) order until a page is full, so its size bounds the cost when few rows match):
 * target id, then actor, action, target type, result. PostgreSQL's planner knows that from its
 * statistics; SQLite, which has none unless ANALYZE ran, is told by keeping the other columns out
 * of index use (the unary `+` SQLite documents for this: `+result = ?` is the same test, unindexed).
 */
function filtered(db: Db, teamId: string, filter: AuditFilter) {
  const problem = auditFilterProblem(filter);
  if (problem) throw new AppError("validation_error", problem);
  const tests: [Column, string][] = [];
  if (filter.targetId) tests.push(["target_id", filter.targetId]);
  if (filter.targetType) tests.push(["target_type", filter.targetType]);
  if (filter.actor)
    tests.push(filter.actor.includes("@") ? ["actor_email", filter.actor.toLowerCase()] : ["user_id", filter.actor]);
  if (filter.action) tests.push(["action", filter.action]);
  if (filter.result) tests.push(["result", filter.result]);
  // The driving index: target (type and id together are one index), else the first of the others.
  const driving = new Set<Column>(
    filter.targetId
      ? ["target_id", ...(filter.targetType ? (["target_type"] as const) : [])]
      : tests.slice(0, 1).map((t) => t[0]),
  );
  const sqlite = !isPostgres(db);
  let q = db
    .selectFrom("audit_events")
    .select([...AUDIT_COLUMNS])
    .where("team_id", "=", teamId);
  for (const [column, value] of tests) {
    q =
      sqlite && !driving.has(column)
        ? q.where(sql<boolean>`+${sql.ref(column)} = ${value}`)
        : q.where(column, "=", value);
  }
  const { from, to } = auditDateRange(filter);
  if (from !== undefined) q = q.where("created_at", ">=", from);
  if (to !== undefined) q = q.where("created_at", "<", to);
  return q;
}

export async function queryAuditEvents(db: Db, query: AuditQuery): Promise<AuditPage> {
  const limit = Math.min(Math.max(query.limit ?? AUDIT_PAGE.default, 1), AUDIT_PAGE.max);
  let q = filtered(db, query.teamId, query.filter);
  if (query.cursor) {
    const c = decodeAuditCursor(query.cursor);
    // A row-value comparison: one index range on both backends (an OR of two is not, on PostgreSQL).
    q = q.where(sql<boolean>`(created_at, id) < (${c.createdAt}, ${c.id})`);
  }
  const rows = await q
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(limit + 1)
    .execute();
  const items = rows.slice(0, limit).map(auditEventFromRow);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last ? encodeAuditCursor(last) : null };
}

/** Every row the filter selects, newest first, read in pages (the export streams these). */
export async function* allAuditEvents(
  db: Db,
  teamId: string,
  filter: AuditFilter,
  pageSize: number = AUDIT_PAGE.max,
  /** Start below this cursor (the export starts below its own audit row: what was there when asked). */
  from: string | null = null,
): AsyncGenerator<AuditEvent> {
  let cursor: string | null = from;
  do {
    const page: AuditPage = await queryAuditEvents(db, { teamId, filter, cursor, limit: pageSize });
    for (const e of page.items) yield e;
    cursor = page.nextCursor;
  } while (cursor);
}

/** An event as the API answers it (snake_case, ISO time). */
export function auditEventView(e: AuditEvent) {
  return {
    id: e.id,
    created_at: e.createdAt.toISOString(),
    team_id: e.teamId,
    actor_id: e.userId,
    actor_email: e.actorEmail,
    credential: e.credential,
    action: e.action,
    target: e.target,
    target_type: e.targetType,
    target_id: e.targetId,
    result: e.result,
    ip: e.ip,
    user_agent: e.userAgent,
    request_id: e.requestId,
    data: e.data,
  };
}
export type AuditEventView = ReturnType<typeof auditEventView>;
