import "server-only";
import type { TokenScope } from "../../api-tokens/scope";
import { newId } from "../ids";
import { forgetRemembered } from "../session-cache";
import type { Db } from "./index";

// The api_tokens table (migration 0012): a member's personal API tokens, by hash. The rules (who may
// make which, what a token may do) are lib/server/api-tokens/; this file only reads and writes rows.

export interface ApiToken {
  id: string;
  teamId: string;
  userId: string;
  name: string;
  hint: string;
  scope: TokenScope;
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  lastUsedIp: string | null;
  revokedAt: Date | null;
  revokedBy: string | null;
  revokedReason: string | null;
  /** The token's own monthly spend cap, whole micro-euros; null: none. */
  spendCapMicro: number | null;
  /** The most sandboxes made with it that may exist at once; null: no limit. */
  maxConcurrent: number | null;
}

export interface ApiTokenWithOwner extends ApiToken {
  owner: { id: string; name: string; email: string };
}

const COLUMNS = [
  "api_tokens.id",
  "api_tokens.team_id",
  "api_tokens.user_id",
  "api_tokens.name",
  "api_tokens.hint",
  "api_tokens.scope",
  "api_tokens.created_at",
  "api_tokens.expires_at",
  "api_tokens.last_used_at",
  "api_tokens.last_used_ip",
  "api_tokens.revoked_at",
  "api_tokens.revoked_by",
  "api_tokens.revoked_reason",
  "api_tokens.spend_cap_micro",
  "api_tokens.max_concurrent",
] as const;

type Row = {
  id: string;
  team_id: string;
  user_id: string;
  name: string;
  hint: string;
  scope: string;
  created_at: number | string;
  expires_at: number | string | null;
  last_used_at: number | string | null;
  last_used_ip: string | null;
  revoked_at: number | string | null;
  revoked_by: string | null;
  revoked_reason: string | null;
  spend_cap_micro: number | string | null;
  max_concurrent: number | string | null;
};

const date = (v: number | string | null) => (v === null ? null : new Date(Number(v)));

function toApiToken(r: Row): ApiToken {
  return {
    id: r.id,
    teamId: r.team_id,
    userId: r.user_id,
    name: r.name,
    hint: r.hint,
    // Anything but "read" would be a row written by a newer Baton: treated as the narrower scope.
    scope: r.scope === "write" ? "write" : "read",
    createdAt: new Date(Number(r.created_at)),
    expiresAt: date(r.expires_at),
    lastUsedAt: date(r.last_used_at),
    lastUsedIp: r.last_used_ip,
    revokedAt: date(r.revoked_at),
    revokedBy: r.revoked_by,
    revokedReason: r.revoked_reason,
    spendCapMicro: r.spend_cap_micro === null ? null : Number(r.spend_cap_micro),
    maxConcurrent: r.max_concurrent === null ? null : Number(r.max_concurrent),
  };
}

export async function insertApiToken(
  db: Db,
  input: {
    teamId: string;
    userId: string;
    name: string;
    hash: string;
    hint: string;
    scope: TokenScope;
    expiresAt: number | null;
    spendCapMicro?: number | null;
    maxConcurrent?: number | null;
    now?: number;
  },
): Promise<ApiToken> {
  const now = input.now ?? Date.now();
  const row = {
    id: newId("tok"),
    team_id: input.teamId,
    user_id: input.userId,
    name: input.name,
    token_hash: input.hash,
    hint: input.hint,
    scope: input.scope,
    created_at: now,
    expires_at: input.expiresAt,
    last_used_at: null,
    last_used_ip: null,
    revoked_at: null,
    revoked_by: null,
    revoked_reason: null,
    spend_cap_micro: input.spendCapMicro ?? null,
    max_concurrent: input.maxConcurrent ?? null,
    cap_alerted_window: null,
  };
  await db.insertInto("api_tokens").values(row).execute();
  return toApiToken(row);
}

/** A token by the hash of what a request presented, with its stored hash (for the constant-time check). */
export async function findApiTokenByHash(db: Db, hash: string): Promise<(ApiToken & { tokenHash: string }) | null> {
  const row = await db
    .selectFrom("api_tokens")
    .select([...COLUMNS, "api_tokens.token_hash"])
    .where("token_hash", "=", hash)
    .executeTakeFirst();
  return row ? { ...toApiToken(row), tokenHash: row.token_hash } : null;
}

/** A token by its id, whatever its team (a signed file link names its token by id). */
export async function findApiTokenById(db: Db, id: string): Promise<ApiToken | null> {
  const row = await db.selectFrom("api_tokens").select(COLUMNS).where("id", "=", id).executeTakeFirst();
  return row ? toApiToken(row) : null;
}

export async function getApiToken(db: Db, teamId: string, id: string): Promise<ApiToken | null> {
  const row = await db
    .selectFrom("api_tokens")
    .select(COLUMNS)
    .where("team_id", "=", teamId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row ? toApiToken(row) : null;
}

/** A team's tokens (or one member's of it), newest first, with their owners; at most `limit`. */
export async function listApiTokens(
  db: Db,
  input: { teamId: string; userId?: string; limit?: number },
): Promise<ApiTokenWithOwner[]> {
  let q = db
    .selectFrom("api_tokens")
    .innerJoin("users", "users.id", "api_tokens.user_id")
    .select(COLUMNS)
    .select(["users.name as owner_name", "users.email as owner_email"])
    .where("api_tokens.team_id", "=", input.teamId);
  if (input.userId) q = q.where("api_tokens.user_id", "=", input.userId);
  const rows = await q
    .orderBy("api_tokens.created_at", "desc")
    .orderBy("api_tokens.id", "desc")
    .limit(input.limit ?? 200)
    .execute();
  return rows.map((r) => ({ ...toApiToken(r), owner: { id: r.user_id, name: r.owner_name, email: r.owner_email } }));
}

/** Revokes one token (once: a revoked one stays as it was). Whether this call revoked it. */
export async function revokeApiToken(
  db: Db,
  input: { id: string; teamId: string; by: string | null; reason: string; now?: number },
): Promise<boolean> {
  const res = await db
    .updateTable("api_tokens")
    .set({ revoked_at: input.now ?? Date.now(), revoked_by: input.by, revoked_reason: input.reason })
    .where("id", "=", input.id)
    .where("team_id", "=", input.teamId)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  forgetRemembered(); // lib/server/session-cache.ts: the bearer check reads the token again
  return Number(res.numUpdatedRows) === 1;
}

/**
 * Revokes a user's live tokens (of one team, or of every team), optionally only those of one scope
 * or only those that never expire; returns the ones it revoked.
 */
export async function revokeApiTokensOf(
  db: Db,
  input: {
    userId: string;
    teamId?: string;
    scope?: TokenScope;
    neverExpiring?: boolean;
    reason: string;
    now?: number;
  },
): Promise<Array<{ id: string; teamId: string; name: string }>> {
  const now = input.now ?? Date.now();
  let q = db
    .updateTable("api_tokens")
    .set({ revoked_at: now, revoked_by: null, revoked_reason: input.reason })
    .where("user_id", "=", input.userId)
    .where("revoked_at", "is", null);
  if (input.teamId) q = q.where("team_id", "=", input.teamId);
  if (input.scope) q = q.where("scope", "=", input.scope);
  if (input.neverExpiring) q = q.where("expires_at", "is", null);
  const rows = await q.returning(["id", "team_id", "name"]).execute();
  if (rows.length > 0) forgetRemembered();
  return rows.map((r) => ({ id: r.id, teamId: r.team_id, name: r.name }));
}

/**
 * Records a use, at most once per `minIntervalMs` per token: nothing is written while the last use
 * read with the token is more recent, and the write is conditional, so concurrent requests and
 * several instances write once. "first" exactly once per token: the write that found it never used.
 */
export async function touchApiToken(
  db: Db,
  input: { id: string; lastUsedAt: Date | null; ip: string | null; now: number; minIntervalMs: number },
): Promise<"first" | "written" | "skipped"> {
  const { lastUsedAt, now, minIntervalMs } = input;
  if (lastUsedAt && now - lastUsedAt.getTime() < minIntervalMs) return "skipped";
  const first = lastUsedAt === null;
  const res = await db
    .updateTable("api_tokens")
    .set({ last_used_at: now, last_used_ip: input.ip })
    .where("id", "=", input.id)
    .where((eb) => (first ? eb("last_used_at", "is", null) : eb("last_used_at", "<=", now - minIntervalMs)))
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1) return "skipped";
  return first ? "first" : "written";
}
