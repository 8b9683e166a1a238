import "server-only";
import { z } from "zod";
import { sha256 } from "../crypto";
import type { Db } from "./index";
import { forgetRemembered } from "../session-cache";
import { inForce, newSecretToken, secretTokenHash } from "./secret-tokens";
import { UserRow, type User } from "./users";
import { EpochDate, parseRow } from "./util";

// Server-side sessions. The cookie carries a random token; the table stores only sha256(token) as
// the id, so a database leak yields no usable cookie (secret-tokens.ts). Sessions end by expiry or
// by revocation (sign out, sign out everywhere, password change, disabled user).

export const SESSION_TTL_MS = 30 * 24 * 60 * 60 * 1000;

export interface Session {
  /** sha256(token), hex: safe to show (e.g. "sign out this device"), useless as a cookie. */
  id: string;
  userId: string;
  createdAt: Date;
  expiresAt: Date;
  lastSeenAt: Date;
  revokedAt: Date | null;
  ip: string | null;
  userAgent: string | null;
}

const SessionRow = z
  .object({
    id: z.string().regex(/^[0-9a-f]{64}$/),
    user_id: z.string().min(1),
    created_at: EpochDate,
    expires_at: EpochDate,
    last_seen_at: EpochDate,
    revoked_at: EpochDate.nullable(),
    ip: z.string().nullable(),
    user_agent: z.string().nullable(),
  })
  .transform((r): Session => ({
    id: r.id,
    userId: r.user_id,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    lastSeenAt: r.last_seen_at,
    revokedAt: r.revoked_at,
    ip: r.ip,
    userAgent: r.user_agent,
  }));

const SESSION_COLUMNS = [
  "sessions.id",
  "sessions.user_id",
  "sessions.created_at",
  "sessions.expires_at",
  "sessions.last_seen_at",
  "sessions.revoked_at",
  "sessions.ip",
  "sessions.user_agent",
] as const;

export const sessionIdFromToken = (token: string): string => sha256(token);

export interface CreateSessionInput {
  userId: string;
  ttlMs?: number;
  ip?: string | null;
  userAgent?: string | null;
  now?: number;
}

/** Creates a session and returns its token (for the cookie; not stored) with the session. */
export async function createSession(db: Db, input: CreateSessionInput): Promise<{ token: string; session: Session }> {
  const now = input.now ?? Date.now();
  const { token, hash } = newSecretToken();
  const row = {
    id: hash,
    user_id: input.userId,
    created_at: now,
    expires_at: now + (input.ttlMs ?? SESSION_TTL_MS),
    last_seen_at: now,
    revoked_at: null,
    ip: input.ip?.slice(0, 64) ?? null,
    user_agent: input.userAgent?.slice(0, 512) ?? null,
  };
  await db.insertInto("sessions").values(row).execute();
  return { token, session: parseRow("sessions", SessionRow, row) };
}

/**
 * The session and user behind a cookie token, or null when the token is unknown, revoked, expired,
 * or its user is disabled. Read-only: call touchSession() to record activity.
 */
export async function findValidSession(
  db: Db,
  token: string,
  opts: { now?: number } = {},
): Promise<{ session: Session; user: User } | null> {
  const id = secretTokenHash(token);
  if (!id) return null;
  const now = opts.now ?? Date.now();
  const row = await db
    .selectFrom("sessions")
    .innerJoin("users", "users.id", "sessions.user_id")
    .select(SESSION_COLUMNS)
    .select([
      "users.id as u_id",
      "users.email as u_email",
      "users.name as u_name",
      "users.created_at as u_created_at",
      "users.updated_at as u_updated_at",
      "users.disabled_at as u_disabled_at",
    ])
    .where("sessions.id", "=", id)
    .where(inForce("sessions", now))
    .where("users.disabled_at", "is", null)
    .executeTakeFirst();
  if (!row) return null;
  const session = parseRow("sessions", SessionRow, row);
  const user = parseRow("users", UserRow, {
    id: row.u_id,
    email: row.u_email,
    name: row.u_name,
    created_at: row.u_created_at,
    updated_at: row.u_updated_at,
    disabled_at: row.u_disabled_at,
  });
  return { session, user };
}

/**
 * Records activity; with `slideTtlMs`, also moves expiry to now + slideTtlMs (never shortening it).
 * Cheap to call per request: it only writes when last_seen_at is older than `minIntervalMs`.
 */
export async function touchSession(
  db: Db,
  sessionId: string,
  opts: { now?: number; slideTtlMs?: number; minIntervalMs?: number } = {},
): Promise<void> {
  const now = opts.now ?? Date.now();
  const minInterval = opts.minIntervalMs ?? 60_000;
  await db
    .updateTable("sessions")
    .set((eb) => ({
      last_seen_at: now,
      ...(opts.slideTtlMs !== undefined
        ? {
            expires_at: eb
              .case()
              .when("expires_at", "<", now + opts.slideTtlMs)
              .then(now + opts.slideTtlMs)
              .else(eb.ref("expires_at"))
              .end(),
          }
        : {}),
    }))
    .where("id", "=", sessionId)
    .where("revoked_at", "is", null)
    .where("last_seen_at", "<=", now - minInterval)
    .execute();
}

/** Revokes the session behind a token (sign out). Returns whether a live session was revoked. */
export async function revokeSession(db: Db, token: string, now = Date.now()): Promise<boolean> {
  const id = secretTokenHash(token);
  return id ? revokeSessionById(db, id, undefined, now) : false;
}

/** Revokes one session by id; with userId, only if it belongs to that user ("sign out that device"). */
export async function revokeSessionById(
  db: Db,
  sessionId: string,
  userId?: string,
  now = Date.now(),
): Promise<boolean> {
  let q = db
    .updateTable("sessions")
    .set({ revoked_at: now })
    .where("id", "=", sessionId)
    .where("revoked_at", "is", null);
  if (userId !== undefined) q = q.where("user_id", "=", userId);
  const res = await q.executeTakeFirst();
  forgetRemembered(); // lib/server/session-cache.ts: the session check reads this again
  return res.numUpdatedRows > 0n;
}

/** Sign out everywhere: revokes every live session of a user, optionally keeping the current one. */
export async function revokeAllSessionsForUser(
  db: Db,
  userId: string,
  opts: { exceptSessionId?: string; now?: number } = {},
): Promise<number> {
  let q = db
    .updateTable("sessions")
    .set({ revoked_at: opts.now ?? Date.now() })
    .where("user_id", "=", userId)
    .where("revoked_at", "is", null);
  if (opts.exceptSessionId !== undefined) q = q.where("id", "!=", opts.exceptSessionId);
  const res = await q.executeTakeFirst();
  forgetRemembered(); // lib/server/session-cache.ts: the session check reads this again
  return Number(res.numUpdatedRows);
}

/** A user's live sessions, most recently used first. */
export async function listActiveSessions(db: Db, userId: string, now = Date.now()): Promise<Session[]> {
  const rows = await db
    .selectFrom("sessions")
    .select(SESSION_COLUMNS)
    .where("user_id", "=", userId)
    .where(inForce("sessions", now))
    .orderBy("last_seen_at", "desc")
    .execute();
  return rows.map((r) => parseRow("sessions", SessionRow, r));
}

/** Housekeeping: deletes sessions that expired or were revoked more than `keepMs` ago. */
export async function purgeSessions(db: Db, opts: { now?: number; keepMs?: number } = {}): Promise<number> {
  const cutoff = (opts.now ?? Date.now()) - (opts.keepMs ?? 7 * 24 * 60 * 60 * 1000);
  const res = await db
    .deleteFrom("sessions")
    .where((eb) => eb.or([eb("expires_at", "<", cutoff), eb("revoked_at", "<", cutoff)]))
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}
