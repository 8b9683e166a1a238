import "server-only";
import { z } from "zod";
import { newId } from "../ids";
import type { Db } from "./index";
import { EpochDate, parseRow } from "./util";

// The audit trail: who did what to which target, with a small JSON payload. Keys that look like
// secrets are redacted before storage, so a careless caller cannot write a token into the log.

export interface AuditEvent {
  id: string;
  teamId: string | null;
  userId: string | null;
  action: string;
  target: string | null;
  data: unknown;
  ip: string | null;
  createdAt: Date;
}

/** "sandbox.create", "connection.activate", "auth.sign_in_failed"… */
export const AuditAction = z.string().regex(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/, {
  error: "audit action must look like resource.verb",
});

const MAX_DATA_BYTES = 8 * 1024;
const SECRET_KEY = /token|secret|password|authorization|cookie|api[_-]?key|ciphertext/i;

/** Deep copy with secret-looking keys replaced by "[redacted]". */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 8) return "[too deep]";
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [
        k,
        SECRET_KEY.test(k) ? "[redacted]" : redact(v, depth + 1),
      ]),
    );
  }
  return value;
}

const AuditRow = z
  .object({
    id: z.string().min(1),
    team_id: z.string().nullable(),
    user_id: z.string().nullable(),
    action: z.string().min(1),
    target: z.string().nullable(),
    data: z.string().nullable(),
    ip: z.string().nullable(),
    created_at: EpochDate,
  })
  .transform((r): AuditEvent => {
    let data: unknown = null;
    if (r.data !== null) {
      try {
        data = JSON.parse(r.data);
      } catch {
        data = { unparseable: true };
      }
    }
    return {
      id: r.id,
      teamId: r.team_id,
      userId: r.user_id,
      action: r.action,
      target: r.target,
      data,
      ip: r.ip,
      createdAt: r.created_at,
    };
  });

export interface AuditInput {
  action: string;
  teamId?: string | null;
  userId?: string | null;
  target?: string | null;
  data?: unknown;
  ip?: string | null;
  now?: number;
}

export async function recordAudit(db: Db, input: AuditInput): Promise<AuditEvent> {
  let data: string | null = null;
  if (input.data !== undefined && input.data !== null) {
    data = JSON.stringify(redact(input.data));
    if (Buffer.byteLength(data) > MAX_DATA_BYTES)
      data = JSON.stringify({ truncated: true, bytes: Buffer.byteLength(data) });
  }
  const row = {
    id: newId("aud"),
    team_id: input.teamId ?? null,
    user_id: input.userId ?? null,
    action: AuditAction.parse(input.action),
    target: input.target?.slice(0, 300) ?? null,
    data,
    ip: input.ip?.slice(0, 64) ?? null,
    created_at: input.now ?? Date.now(),
  };
  await db.insertInto("audit_events").values(row).execute();
  return parseRow("audit_events", AuditRow, row);
}

/** A team's (or, with teamId null, a user's) audit events, newest first, paged by `before` (an event id). */
export async function listAuditEvents(
  db: Db,
  filter: { teamId: string; limit?: number; before?: string } | { userId: string; limit?: number; before?: string },
): Promise<AuditEvent[]> {
  const limit = Math.min(Math.max(filter.limit ?? 50, 1), 500);
  let q = db
    .selectFrom("audit_events")
    .select(["id", "team_id", "user_id", "action", "target", "data", "ip", "created_at"]);
  q = "teamId" in filter ? q.where("team_id", "=", filter.teamId) : q.where("user_id", "=", filter.userId);
  if (filter.before !== undefined) q = q.where("id", "<", filter.before);
  const rows = await q.orderBy("id", "desc").limit(limit).execute();
  return rows.map((r) => parseRow("audit_events", AuditRow, r));
}
