import "server-only";
import { z } from "zod";
import type { AuditAction } from "../../audit-actions";
import { newId } from "../ids";
import type { Db } from "./index";
import { EpochDate, parseRow } from "./util";

// The audit trail: who did what to which target, with a small JSON payload. Keys that look like
// secrets are redacted before storage, so a careless caller cannot write a token into the log.

export interface AuditEvent {
  id: string;
  teamId: string | null;
  userId: string | null;
  /** The actor's email when the row was written. */
  actorEmail: string | null;
  /** "session", "token:<name>", "password"… */
  credential: string | null;
  action: string;
  target: string | null;
  targetType: string | null;
  targetId: string | null;
  /** "ok", or the refusal's code. */
  result: string;
  data: unknown;
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
  createdAt: Date;
}

/** "sandbox.create", "connection.activate", "auth.sign_in_failed"… (the catalogue: lib/audit-actions.ts) */
export const AuditActionFormat = z.string().regex(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/, {
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

export const AUDIT_COLUMNS = [
  "id",
  "team_id",
  "user_id",
  "actor_email",
  "credential",
  "action",
  "target",
  "target_type",
  "target_id",
  "result",
  "data",
  "ip",
  "user_agent",
  "request_id",
  "created_at",
] as const;

const AuditRow = z
  .object({
    id: z.string().min(1),
    team_id: z.string().nullable(),
    user_id: z.string().nullable(),
    actor_email: z.string().nullable(),
    credential: z.string().nullable(),
    action: z.string().min(1),
    target: z.string().nullable(),
    target_type: z.string().nullable(),
    target_id: z.string().nullable(),
    result: z.string(),
    data: z.string().nullable(),
    ip: z.string().nullable(),
    user_agent: z.string().nullable(),
    request_id: z.string().nullable(),
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
      actorEmail: r.actor_email,
      credential: r.credential,
      action: r.action,
      target: r.target,
      targetType: r.target_type,
      targetId: r.target_id,
      result: r.result,
      data,
      ip: r.ip,
      userAgent: r.user_agent,
      requestId: r.request_id,
      createdAt: r.created_at,
    };
  });

/** A row as read from audit_events → the event. */
export function auditEventFromRow(row: unknown): AuditEvent {
  return parseRow("audit_events", AuditRow, row);
}

export interface AuditInput {
  /** One of lib/audit-actions.ts: a new action goes into that catalogue first. */
  action: AuditAction;
  teamId?: string | null;
  userId?: string | null;
  /** Looked up from userId when left out. */
  actorEmail?: string | null;
  credential?: string | null;
  target?: string | null;
  /** "sandbox", "connection", "member"…; with targetId, `target` defaults to the id. */
  targetType?: string | null;
  targetId?: string | null;
  /** "ok" (default) or the refusal's code. */
  result?: string;
  data?: unknown;
  ip?: string | null;
  userAgent?: string | null;
  requestId?: string | null;
  now?: number;
}

/** `queued`: the row went into its team's SIEM outbox. */
type AuditListener = (db: Db, event: AuditEvent, queued: boolean) => void;
const listeners = new Set<AuditListener>();

/** Called after each row is written (the SIEM stream's nudge); returns the unsubscribe. */
export function onAuditRecorded(listener: AuditListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

const clip = (v: string | null | undefined, n: number): string | null => (v == null ? null : v.slice(0, n));

export async function recordAudit(db: Db, input: AuditInput): Promise<AuditEvent> {
  let data: string | null = null;
  if (input.data !== undefined && input.data !== null) {
    data = JSON.stringify(redact(input.data));
    if (Buffer.byteLength(data) > MAX_DATA_BYTES)
      data = JSON.stringify({ truncated: true, bytes: Buffer.byteLength(data) });
  }
  let actorEmail = input.actorEmail;
  if (actorEmail === undefined && input.userId) {
    const u = await db.selectFrom("users").select("email").where("id", "=", input.userId).executeTakeFirst();
    actorEmail = u?.email ?? null;
  }
  const row = {
    id: newId("aud"),
    team_id: input.teamId ?? null,
    user_id: input.userId ?? null,
    actor_email: clip(actorEmail?.toLowerCase(), 320),
    credential: clip(input.credential, 200),
    action: AuditActionFormat.parse(input.action),
    target: clip(input.target ?? input.targetId, 300),
    target_type: clip(input.targetType, 64),
    target_id: clip(input.targetId, 300),
    result: clip(input.result, 64) ?? "ok",
    data,
    ip: clip(input.ip, 64),
    user_agent: clip(input.userAgent, 512),
    request_id: clip(input.requestId, 100),
    created_at: input.now ?? Date.now(),
  };
  await db.insertInto("audit_events").values(row).execute();
  // The team's SIEM stream, when it has one: queued in the same statement's spirit (one insert that
  // only happens when the stream is on), sent by lib/server/audit/stream.ts.
  let queued = false;
  if (row.team_id !== null) {
    const res = await db
      .insertInto("audit_outbox")
      .columns(["event_id", "team_id", "attempts", "next_attempt_at", "created_at"])
      .expression((eb) =>
        eb
          .selectFrom("audit_settings")
          .select([
            eb.val(row.id).as("event_id"),
            eb.val(row.team_id!).as("team_id"),
            eb.val(0).as("attempts"),
            eb.val(row.created_at).as("next_attempt_at"),
            eb.val(row.created_at).as("created_at"),
          ])
          .where("team_id", "=", row.team_id!)
          .where("siem_enabled", "=", 1)
          .where("siem_url", "is not", null),
      )
      .executeTakeFirst();
    queued = Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
  }
  const event = parseRow("audit_events", AuditRow, row);
  for (const l of listeners) {
    try {
      l(db, event, queued);
    } catch {
      // a listener's failure is its own
    }
  }
  return event;
}

/** One row per team the user belongs to (sign-ins: each team's admins see their members' sign-ins); one team-less row without any. */
export async function recordAuditForUserTeams(db: Db, input: AuditInput): Promise<void> {
  const teams = input.userId
    ? await db.selectFrom("memberships").select("team_id").where("user_id", "=", input.userId).execute()
    : [];
  if (teams.length === 0) {
    await recordAudit(db, { ...input, teamId: null });
    return;
  }
  for (const t of teams) await recordAudit(db, { ...input, teamId: t.team_id });
}

/** A team's (or, with teamId null, a user's) audit events, newest first, paged by `before` (an event id). */
export async function listAuditEvents(
  db: Db,
  filter: { teamId: string; limit?: number; before?: string } | { userId: string; limit?: number; before?: string },
): Promise<AuditEvent[]> {
  const limit = Math.min(Math.max(filter.limit ?? 50, 1), 500);
  let q = db.selectFrom("audit_events").select([...AUDIT_COLUMNS]);
  q = "teamId" in filter ? q.where("team_id", "=", filter.teamId) : q.where("user_id", "=", filter.userId);
  if (filter.before !== undefined) q = q.where("id", "<", filter.before);
  const rows = await q.orderBy("id", "desc").limit(limit).execute();
  return rows.map((r) => parseRow("audit_events", AuditRow, r));
}
