import "server-only";
import { z } from "zod";
import { encrypt, tokenHint } from "../crypto";
import { newId } from "../ids";
import { DbConflictError, DbNotFoundError, isUniqueViolation } from "./errors";
import type { Db } from "./index";
import { thenForget } from "../session-cache";
import { EpochDate, inTransaction, IntBool, lockRow, parseRow } from "./util";

// A user's orkestr connections (the token vault's rows). Tokens are encrypted here on the way in,
// bound to their row id as associated data, and never decrypted here: getConnectionSecret() hands
// the ciphertext and its AAD to lib/server/tokens.ts, the only place that decrypts.
// At most one connection per user is active: setActiveConnection() is transactional, and a partial
// unique index (orkestr_connections_one_active_key) makes the database refuse a second one.

export interface Connection {
  id: string;
  userId: string;
  teamId: string | null;
  name: string;
  baseUrl: string;
  /** "ork_…abcd": all the UI ever sees of the token. */
  tokenHint: string;
  isActive: boolean;
  createdAt: Date;
  updatedAt: Date;
  lastCheckedAt: Date | null;
  lastError: string | null;
  /** The local engine's id of the token (to revoke it there); null for any other server. */
  engineTokenId: string | null;
}

const ConnectionRow = z
  .object({
    id: z.string().min(1),
    user_id: z.string().min(1),
    team_id: z.string().nullable(),
    name: z.string().min(1),
    base_url: z.url({ protocol: /^https?$/ }),
    token_hint: z.string(),
    is_active: IntBool,
    created_at: EpochDate,
    updated_at: EpochDate,
    last_checked_at: EpochDate.nullable(),
    last_error: z.string().nullable(),
    engine_token_id: z.string().nullable(),
  })
  .transform((r): Connection => ({
    id: r.id,
    userId: r.user_id,
    teamId: r.team_id,
    name: r.name,
    baseUrl: r.base_url,
    tokenHint: r.token_hint,
    isActive: r.is_active,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    lastCheckedAt: r.last_checked_at,
    lastError: r.last_error,
    engineTokenId: r.engine_token_id,
  }));

const COLUMNS = [
  "id",
  "user_id",
  "team_id",
  "name",
  "base_url",
  "token_hint",
  "is_active",
  "created_at",
  "updated_at",
  "last_checked_at",
  "last_error",
  "engine_token_id",
] as const;

const NameInput = z.string().trim().min(1).max(80);
const BaseUrlInput = z
  .url({ protocol: /^https?$/, error: "base URL must be an http(s) URL" })
  .transform((u) => u.replace(/\/+$/, ""));
const TokenInput = z
  .string()
  .trim()
  .min(8, { error: "token is too short" })
  .max(4096)
  .regex(/^[\x21-\x7e]+$/, { error: "token must be printable ASCII without spaces" });

/** The associated data binding a token ciphertext to its row: decrypt with the same value. */
export function connectionTokenAad(connectionId: string): string {
  return `orkestr_connections:${connectionId}:token`;
}

function nameConflict(err: unknown): never {
  if (isUniqueViolation(err, { index: "orkestr_connections_user_name_key", column: "orkestr_connections.name" })) {
    throw new DbConflictError("connection_name_taken", "you already have a connection with this name", { cause: err });
  }
  throw err;
}

async function activate(trx: Db, userId: string, id: string, now: number): Promise<void> {
  await lockRow(trx, "users", userId);
  await trx
    .updateTable("orkestr_connections")
    .set({ is_active: 0, updated_at: now })
    .where("user_id", "=", userId)
    .where("is_active", "=", 1)
    .where("id", "!=", id)
    .execute();
  const res = await trx
    .updateTable("orkestr_connections")
    .set({ is_active: 1, updated_at: now })
    .where("user_id", "=", userId)
    .where("id", "=", id)
    .executeTakeFirst();
  if (res.numUpdatedRows === 0n) throw new DbNotFoundError("connection");
}

export interface UpsertConnectionInput {
  userId: string;
  teamId?: string | null;
  name: string;
  baseUrl: string;
  /** Plaintext token; encrypted before it is stored. */
  token: string;
  /** Make it the active connection. The user's first connection is always made active. */
  activate?: boolean;
  /** The local engine's id of `token` (null for any other server). */
  engineTokenId?: string | null;
  now?: number;
}

/**
 * Creates the user's connection called `name`, or replaces its URL and token if it exists.
 * Runs in one transaction with the activation, so the one-active invariant always holds.
 */
async function upsertConnectionRow(db: Db, input: UpsertConnectionInput): Promise<Connection> {
  const now = input.now ?? Date.now();
  const name = NameInput.parse(input.name);
  const baseUrl = BaseUrlInput.parse(input.baseUrl);
  const token = TokenInput.parse(input.token);
  try {
    const id = await inTransaction(db, async (trx) => {
      await lockRow(trx, "users", input.userId);
      const existing = await trx
        .selectFrom("orkestr_connections")
        .select("id")
        .where("user_id", "=", input.userId)
        .where("name", "=", name)
        .executeTakeFirst();
      const id = existing?.id ?? newId("conn");
      const secret = {
        token_ciphertext: encrypt(token, { aad: connectionTokenAad(id) }),
        token_hint: tokenHint(token),
      };
      if (existing) {
        await trx
          .updateTable("orkestr_connections")
          .set({
            ...secret,
            base_url: baseUrl,
            ...(input.teamId !== undefined ? { team_id: input.teamId } : {}),
            engine_token_id: input.engineTokenId ?? null,
            updated_at: now,
            last_checked_at: null,
            last_error: null,
          })
          .where("id", "=", id)
          .execute();
      } else {
        await trx
          .insertInto("orkestr_connections")
          .values({
            id,
            user_id: input.userId,
            team_id: input.teamId ?? null,
            name,
            base_url: baseUrl,
            ...secret,
            is_active: 0,
            created_at: now,
            updated_at: now,
            last_checked_at: null,
            last_error: null,
            engine_token_id: input.engineTokenId ?? null,
          })
          .execute();
      }
      const hasActive = await trx
        .selectFrom("orkestr_connections")
        .select("id")
        .where("user_id", "=", input.userId)
        .where("is_active", "=", 1)
        .executeTakeFirst();
      if (input.activate || !hasActive) await activate(trx, input.userId, id, now);
      return id;
    });
    const conn = await getConnection(db, input.userId, id);
    if (!conn) throw new DbNotFoundError("connection");
    return conn;
  } catch (err) {
    nameConflict(err);
  }
}

/** Renames a connection or replaces its URL or token (a new token resets the last check). */
async function updateConnectionRow(
  db: Db,
  userId: string,
  id: string,
  patch: { name?: string; baseUrl?: string; token?: string; engineTokenId?: string | null; now?: number },
): Promise<Connection> {
  const now = patch.now ?? Date.now();
  const token = patch.token !== undefined ? TokenInput.parse(patch.token) : undefined;
  const set = {
    ...(patch.name !== undefined ? { name: NameInput.parse(patch.name) } : {}),
    ...(patch.baseUrl !== undefined ? { base_url: BaseUrlInput.parse(patch.baseUrl) } : {}),
    ...(token !== undefined
      ? {
          token_ciphertext: encrypt(token, { aad: connectionTokenAad(id) }),
          token_hint: tokenHint(token),
          last_checked_at: null,
          last_error: null,
          // A token pasted by hand is no engine token of ours: its id is whatever the caller says.
          engine_token_id: patch.engineTokenId ?? null,
        }
      : {}),
    updated_at: now,
  };
  try {
    const res = await db
      .updateTable("orkestr_connections")
      .set(set)
      .where("user_id", "=", userId)
      .where("id", "=", id)
      .executeTakeFirst();
    if (res.numUpdatedRows === 0n) throw new DbNotFoundError("connection");
  } catch (err) {
    nameConflict(err);
  }
  const conn = await getConnection(db, userId, id);
  if (!conn) throw new DbNotFoundError("connection");
  return conn;
}

/** Makes one of the user's connections the active one, deactivating the others, atomically. */
async function setActiveConnectionRow(db: Db, userId: string, id: string, now = Date.now()): Promise<Connection> {
  await inTransaction(db, (trx) => activate(trx, userId, id, now));
  const conn = await getConnection(db, userId, id);
  if (!conn) throw new DbNotFoundError("connection");
  return conn;
}

/** The user's connections, active first, then by name. */
export async function listConnections(db: Db, userId: string): Promise<Connection[]> {
  const rows = await db
    .selectFrom("orkestr_connections")
    .select(COLUMNS)
    .where("user_id", "=", userId)
    .orderBy("is_active", "desc")
    .orderBy("name")
    .execute();
  return rows.map((r) => parseRow("orkestr_connections", ConnectionRow, r));
}

/** One of the user's connections (another user's id gives null, like a missing one). */
export async function getConnection(db: Db, userId: string, id: string): Promise<Connection | null> {
  const row = await db
    .selectFrom("orkestr_connections")
    .select(COLUMNS)
    .where("user_id", "=", userId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row ? parseRow("orkestr_connections", ConnectionRow, row) : null;
}

export async function getActiveConnection(db: Db, userId: string): Promise<Connection | null> {
  const row = await db
    .selectFrom("orkestr_connections")
    .select(COLUMNS)
    .where("user_id", "=", userId)
    .where("is_active", "=", 1)
    .executeTakeFirst();
  return row ? parseRow("orkestr_connections", ConnectionRow, row) : null;
}

/**
 * For lib/server/tokens.ts only: a connection (the active one when `id` is omitted) with its token
 * ciphertext and the AAD to decrypt it with. Never pass the result to the UI.
 */
export async function getConnectionSecret(
  db: Db,
  userId: string,
  id?: string,
): Promise<{ connection: Connection; ciphertext: string; aad: string } | null> {
  let q = db
    .selectFrom("orkestr_connections")
    .select([...COLUMNS, "token_ciphertext"])
    .where("user_id", "=", userId);
  q = id === undefined ? q.where("is_active", "=", 1) : q.where("id", "=", id);
  const row = await q.executeTakeFirst();
  if (!row) return null;
  const connection = parseRow("orkestr_connections", ConnectionRow, row);
  const ciphertext = parseRow("orkestr_connections", z.string().startsWith("v1:"), row.token_ciphertext);
  return { connection, ciphertext, aad: connectionTokenAad(connection.id) };
}

/** Records the outcome of checking a connection against its server (null error = it answered). */
export async function recordConnectionCheck(
  db: Db,
  userId: string,
  id: string,
  error: string | null,
  now = Date.now(),
): Promise<void> {
  await db
    .updateTable("orkestr_connections")
    .set({ last_checked_at: now, last_error: error === null ? null : error.slice(0, 500) })
    .where("user_id", "=", userId)
    .where("id", "=", id)
    .execute();
}

/**
 * Deletes one of the user's connections. When it was the active one, the most recently updated
 * remaining connection becomes active, so a user with connections always has one in use.
 */
async function deleteConnectionRow(db: Db, userId: string, id: string, now = Date.now()): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    await lockRow(trx, "users", userId);
    const victim = await trx
      .selectFrom("orkestr_connections")
      .select("is_active")
      .where("user_id", "=", userId)
      .where("id", "=", id)
      .executeTakeFirst();
    if (!victim) return false;
    await trx.deleteFrom("orkestr_connections").where("user_id", "=", userId).where("id", "=", id).execute();
    if (victim.is_active === 1) {
      const next = await trx
        .selectFrom("orkestr_connections")
        .select("id")
        .where("user_id", "=", userId)
        .orderBy("updated_at", "desc")
        .orderBy("id", "desc")
        .executeTakeFirst();
      if (next) await activate(trx, userId, next.id, now);
    }
    return true;
  });
}

/**
 * Connections holding a local-engine token, of one user (and, with `teamId`, made for that team):
 * what must be revoked when the user is disabled or leaves the team.
 */
export async function listEngineTokenConnections(
  db: Db,
  filter: { userId: string; teamId?: string },
): Promise<Connection[]> {
  let q = db
    .selectFrom("orkestr_connections")
    .select(COLUMNS)
    .where("user_id", "=", filter.userId)
    .where("engine_token_id", "is not", null);
  if (filter.teamId !== undefined) q = q.where("team_id", "=", filter.teamId);
  return (await q.execute()).map((r) => parseRow("orkestr_connections", ConnectionRow, r));
}

// The writes, each followed by forgetRemembered(): the API proxy remembers a user's connection
// client for a moment (lib/server/session-cache.ts), and must not use a replaced or removed token
// after any of these in this process.
export const upsertConnection = (...args: Parameters<typeof upsertConnectionRow>) =>
  thenForget(upsertConnectionRow(...args));
export const updateConnection = (...args: Parameters<typeof updateConnectionRow>) =>
  thenForget(updateConnectionRow(...args));
export const setActiveConnection = (...args: Parameters<typeof setActiveConnectionRow>) =>
  thenForget(setActiveConnectionRow(...args));
export const deleteConnection = (...args: Parameters<typeof deleteConnectionRow>) =>
  thenForget(deleteConnectionRow(...args));
