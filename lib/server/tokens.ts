import "server-only";
import { randomUUID } from "node:crypto";
import {
  createOrkestrClient,
  normalizeBaseUrl,
  type FetchLike,
  type OrkestrClient,
  type OrkestrClientOptions,
} from "../orkestr/core";
import {
  checkConnection,
  type ConnectionCheck,
  type ConnectionCheckCode,
  type ConnectionCheckOk,
} from "./connection-check";
import { CryptoError, decrypt } from "./crypto";
import {
  deleteConnection,
  getActiveConnection,
  getConnection,
  getConnectionSecret,
  listConnections,
  listEngineTokenConnections,
  recordConnectionCheck,
  setActiveConnection,
  updateConnection,
  upsertConnection,
  type Connection,
} from "./db/connections";
import { DbConflictError, DbNotFoundError } from "./db/errors";
import { getMigratedDb, type Db } from "./db/index";
import { getMembership, getTeam, type Role } from "./db/teams";
import { findUserById } from "./db/users";
import {
  engineAccountFor,
  localEngineOrigin,
  localEngineOrigins,
  mintLocalEngineToken,
  revokeLocalEngineToken,
  LOCAL_ENGINE_SCOPES,
} from "./local-engine";
import { engineScopesFor, type EngineScope } from "./rbac";
import { remembered } from "./session-cache";
import { assertSafeBaseUrl, fetchFor, UnsafeUrlError, type Resolver, type SafeBaseUrl } from "./ssrf";
import { UserFacingError } from "./user-error";

// The token vault (issue 4 item 4): the ONLY module that decrypts
// orkestr connection tokens. Everything it returns carries the token's hint ("ork_…abcd"), never
// the token; the one exception is orkestrFor(), whose client holds it privately to send it
// upstream. Saving runs the SSRF check and a live check of the token first, and stores only then.

/** Both token generations (contract C4): `ork_<random>` today, `sp_live_…` in the 0.1.0a1 README. */
export const TOKEN_FORMAT = /^(ork|sp_live)_[A-Za-z0-9_-]{8,}$/;
const MAX_TOKEN_LENGTH = 4096;
const MAX_NAME_LENGTH = 80;
export const LOCAL_ENGINE_CONNECTION_NAME = "Local engine";

export type VaultErrorCode =
  "invalid_token_format" | "invalid_name" | "no_connection" | "token_unreadable" | ConnectionCheckCode;

/** HTTP status per code: the user's input → 422; missing or unusable connection → 409; upstream trouble → 502. */
export const VAULT_ERROR_STATUS: Record<VaultErrorCode, number> = {
  invalid_token_format: 422,
  invalid_name: 422,
  invalid_url: 422,
  private_address: 422,
  unresolvable_host: 422,
  bad_token: 422,
  insufficient_scope: 422,
  not_orkestr: 422,
  unreachable: 422,
  upstream_error: 502,
  no_connection: 409,
  token_unreadable: 409,
};

/** Everything the vault refuses, with `{ code, detail }` for the API and the status to answer with. */
export class VaultError extends UserFacingError<VaultErrorCode> {
  override name = "VaultError";
  readonly status: number;
  constructor(
    code: VaultErrorCode,
    detail: string,
    options: { cause?: unknown; field?: "name" | "base_url" | "token" } = {},
  ) {
    super(code, detail, options);
    this.status = VAULT_ERROR_STATUS[code];
  }
}

/** What the UI may see of a connection. */
export interface ConnectionView {
  id: string;
  name: string;
  baseUrl: string;
  /** "ork_…abcd". */
  tokenHint: string;
  teamId: string | null;
  isActive: boolean;
  /** The configured local engine (loopback, minted with the bootstrap secret). */
  isLocalEngine: boolean;
  lastCheckedAt: string | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface ActiveConnection {
  id: string;
  name: string;
  baseUrl: string;
  tokenHint: string;
  isLocalEngine: boolean;
  /** The team it was made for (its figures are that team's), or null: made by a user without one. */
  teamId: string | null;
}

/** Test seams; route handlers pass nothing. */
export interface VaultOptions {
  /** Default: the process database (getMigratedDb()). */
  db?: Db;
  /** DNS resolver for the SSRF checks and the guarded fetch. */
  resolver?: Resolver;
  /** Origins that count as the local engine; default localEngineOrigins() from the environment. */
  localEngineOrigins?: readonly string[];
  /** Replaces the fetch used for checks and by orkestrFor()'s client. */
  fetch?: FetchLike;
  /** Connection check timeout, default 5 000 ms. */
  checkTimeoutMs?: number;
}

const dbOf = (opts: VaultOptions): Promise<Db> => (opts.db ? Promise.resolve(opts.db) : getMigratedDb());

function isLocalEngineUrl(baseUrl: string, opts: VaultOptions): boolean {
  try {
    return (opts.localEngineOrigins ?? localEngineOrigins()).includes(new URL(baseUrl).origin);
  } catch {
    return false;
  }
}

/** Whether a connection is to the configured local engine (its base URL's origin). */
export function isLocalEngineConnection(c: Pick<Connection, "baseUrl">, opts: VaultOptions = {}): boolean {
  return isLocalEngineUrl(c.baseUrl, opts);
}

function toView(c: Connection, opts: VaultOptions): ConnectionView {
  return {
    id: c.id,
    name: c.name,
    baseUrl: c.baseUrl,
    tokenHint: c.tokenHint,
    teamId: c.teamId,
    isActive: c.isActive,
    isLocalEngine: isLocalEngineUrl(c.baseUrl, opts),
    lastCheckedAt: c.lastCheckedAt?.toISOString() ?? null,
    lastError: c.lastError,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

/** Trims and checks a pasted token against TOKEN_FORMAT; throws VaultError `invalid_token_format`. */
export function normalizeToken(input: string): string {
  const token = (input ?? "").trim();
  if (!token)
    throw new VaultError("invalid_token_format", "Paste the orkestr API token (it starts with ork_).", {
      field: "token",
    });
  if (token.length > MAX_TOKEN_LENGTH || !TOKEN_FORMAT.test(token)) {
    // Never echo the input: it may be a real secret pasted into the wrong field.
    throw new VaultError(
      "invalid_token_format",
      "That is not an orkestr API token: tokens look like ork_ followed by letters, digits, _ or - " +
        "(sp_live_… from early orkestr releases works too). Check it was copied whole, without spaces.",
      { field: "token" },
    );
  }
  return token;
}

function normalizeName(input: string): string {
  const name = (input ?? "").trim();
  if (!name) throw new VaultError("invalid_name", 'Give the connection a name, e.g. "Production".', { field: "name" });
  if (name.length > MAX_NAME_LENGTH)
    throw new VaultError("invalid_name", `The name is too long (at most ${MAX_NAME_LENGTH} characters).`, {
      field: "name",
    });
  return name;
}

async function safeUrl(baseUrl: string, opts: VaultOptions): Promise<SafeBaseUrl> {
  try {
    return await assertSafeBaseUrl(baseUrl, { resolver: opts.resolver, localEngineOrigins: opts.localEngineOrigins });
  } catch (err) {
    if (err instanceof UnsafeUrlError) throw new VaultError(err.code, err.detail, { cause: err, field: "base_url" });
    throw err;
  }
}

/** Runs the live check; throws VaultError with the check's code and detail when it fails. */
async function checked(safe: SafeBaseUrl, token: string, opts: VaultOptions): Promise<ConnectionCheckOk> {
  const check = await checkConnection(safe, token, {
    resolver: opts.resolver,
    fetch: opts.fetch,
    timeoutMs: opts.checkTimeoutMs,
  });
  if (!check.ok) {
    const field = check.code === "bad_token" || check.code === "insufficient_scope" ? "token" : "base_url";
    throw new VaultError(check.code, check.detail, { field });
  }
  return check;
}

async function reread(db: Db, userId: string, id: string, opts: VaultOptions): Promise<ConnectionView> {
  const conn = await getConnection(db, userId, id);
  if (!conn) throw new DbNotFoundError("connection");
  return toView(conn, opts);
}

// ---------------------------------------------------------------------------------------------
// Reading

/** The user's active connection without its token, or null when they have none. */
export async function activeConnection(userId: string, opts: VaultOptions = {}): Promise<ActiveConnection | null> {
  const conn = await getActiveConnection(await dbOf(opts), userId);
  if (!conn) return null;
  return {
    id: conn.id,
    name: conn.name,
    baseUrl: conn.baseUrl,
    tokenHint: conn.tokenHint,
    isLocalEngine: isLocalEngineUrl(conn.baseUrl, opts),
    teamId: conn.teamId,
  };
}

/** The user's connections (active first), hint only. */
export async function listUserConnections(userId: string, opts: VaultOptions = {}): Promise<ConnectionView[]> {
  return (await listConnections(await dbOf(opts), userId)).map((c) => toView(c, opts));
}

function noConnection(): VaultError {
  return new VaultError(
    "no_connection",
    "You have no orkestr connection yet. Add one in Settings → Connections (base URL and token), or use the local engine.",
  );
}

async function decryptToken(
  db: Db,
  userId: string,
  connectionId: string | undefined,
): Promise<{ connection: Connection; token: string }> {
  const secret = await getConnectionSecret(db, userId, connectionId);
  if (!secret) {
    if (connectionId === undefined) throw noConnection();
    throw new DbNotFoundError("connection");
  }
  try {
    return { connection: secret.connection, token: decrypt(secret.ciphertext, { aad: secret.aad }) };
  } catch (err) {
    if (!(err instanceof CryptoError)) throw err;
    throw new VaultError(
      "token_unreadable",
      `The token of the connection "${secret.connection.name}" can no longer be decrypted: the server's vault key ` +
        "(BATON_SECRET, or secret.key in the data directory) changed since it was saved. Replace the token in Settings → Connections.",
      { cause: err },
    );
  }
}

/**
 * An orkestr client for the user's active connection (or `connectionId`), with the decrypted token
 * inside. Non-local connections go through the guarded fetch, which refuses internal addresses at
 * connect time. Throws VaultError `no_connection` when the user has none.
 */
export async function orkestrFor(
  userId: string,
  opts: VaultOptions & {
    connectionId?: string;
    client?: Omit<OrkestrClientOptions, "baseUrl" | "token" | "fetch">;
  } = {},
): Promise<OrkestrClient> {
  const { connection, token } = await decryptToken(await dbOf(opts), userId, opts.connectionId);
  const isLocalEngine = isLocalEngineUrl(connection.baseUrl, opts);
  if (!isLocalEngine && !connection.baseUrl.startsWith("https:")) {
    throw new VaultError(
      "invalid_url",
      `The connection "${connection.name}" uses plain http (${connection.baseUrl}), which is only allowed for the local engine ` +
        `at ${(opts.localEngineOrigins ?? localEngineOrigins())[0]}. Edit it to use https://.`,
      { field: "base_url" },
    );
  }
  return createOrkestrClient({
    ...opts.client,
    baseUrl: connection.baseUrl,
    token,
    fetch: opts.fetch ?? fetchFor({ isLocalEngine }, opts.resolver ? { resolver: opts.resolver } : undefined),
  });
}

/**
 * orkestrFor() as the API proxy uses it (lib/server/upstream.ts): the client of one of the user's
 * connections (the acting team's, lib/server/acting-team.ts), remembered for a moment
 * (lib/server/session-cache.ts) so that a page's burst of calls does not read and decrypt the token
 * for each. Any connection write in this process forgets it at once; another instance's within
 * SESSION_CACHE_TTL_MS.
 */
export async function rememberedOrkestrFor(
  userId: string,
  connectionId: string,
  client: Omit<OrkestrClientOptions, "baseUrl" | "token" | "fetch">,
): Promise<OrkestrClient> {
  const db = await getMigratedDb();
  // orkestrFor() throws rather than answering null (no connection, unreadable token): not kept.
  return (await remembered("connection", db, `${MODULE_GRAPH}:${userId}:${connectionId}`, () =>
    orkestrFor(userId, { db, client, connectionId }),
  ))!;
}

/**
 * This copy of the module. The memory is one per process, but the console server runs this code
 * in two module graphs (Next's bundles, and tsx for the API fast path and the terminal relay), each
 * with its own OrkestrError class: a client made in one graph throws errors the other's
 * `instanceof` checks do not know (a 404 would become a 500). So each graph keeps its own clients.
 */
const MODULE_GRAPH = randomUUID();

/** What the PTY WebSocket relay needs to reach the user's orkestr API (see orkestrUpgradeFor). */
export interface OrkestrUpgradeTarget {
  /** The connection's base URL, normalised to end in /v1. */
  baseUrl: string;
  isLocalEngine: boolean;
  /** `Authorization: Bearer …` for the one upgrade request. */
  headers: { Authorization: string };
}

/**
 * For the PTY WebSocket relay (lib/server/pty-relay.ts) only: browsers cannot put a Bearer header
 * on a WebSocket, so the relay sends it on its upstream upgrade request. Beside orkestrFor() this is
 * the one place a decrypted token leaves the vault, and only into that request header. Same rules
 * as orkestrFor(): plain http only for the local engine; the caller must use the SSRF-guarded
 * lookup for any other host.
 */
export async function orkestrUpgradeFor(
  userId: string,
  opts: VaultOptions & { connectionId?: string } = {},
): Promise<OrkestrUpgradeTarget> {
  const { connection, token } = await decryptToken(await dbOf(opts), userId, opts.connectionId);
  const isLocalEngine = isLocalEngineUrl(connection.baseUrl, opts);
  if (!isLocalEngine && !connection.baseUrl.startsWith("https:")) {
    throw new VaultError(
      "invalid_url",
      `The connection "${connection.name}" uses plain http (${connection.baseUrl}), which is only allowed for the local engine.`,
      {
        field: "base_url",
      },
    );
  }
  return {
    baseUrl: normalizeBaseUrl(connection.baseUrl),
    isLocalEngine,
    headers: { Authorization: `Bearer ${token}` },
  };
}

/**
 * Checks one of the user's connections now (the status indicator: the acting team's, or the active
 * one without `connectionId`) and records the outcome on the row (last_checked_at, last_error).
 * Null when there is no such connection.
 */
export async function checkActiveConnection(
  userId: string,
  opts: VaultOptions & { connectionId?: string } = {},
): Promise<{ connection: ConnectionView; check: ConnectionCheck } | null> {
  const db = await dbOf(opts);
  let found: { connection: Connection; token: string };
  try {
    found = await decryptToken(db, userId, opts.connectionId);
  } catch (err) {
    if (err instanceof VaultError && err.code === "no_connection") return null;
    if (err instanceof DbNotFoundError) return null;
    throw err;
  }
  const check = await checkConnection(found.connection.baseUrl, found.token, {
    resolver: opts.resolver,
    localEngineOrigins: opts.localEngineOrigins,
    fetch: opts.fetch,
    timeoutMs: opts.checkTimeoutMs,
  });
  await recordConnectionCheck(db, userId, found.connection.id, check.ok ? null : `${check.code}: ${check.detail}`);
  return { connection: await reread(db, userId, found.connection.id, opts), check };
}

// ---------------------------------------------------------------------------------------------
// Writing

export interface SaveConnectionInput {
  userId: string;
  name: string;
  baseUrl: string;
  /** Plaintext, as pasted; never stored or returned as is. */
  token: string;
  teamId?: string | null;
  /** Make it the active connection. The user's first connection always becomes active. */
  activate?: boolean;
}

export interface SavedConnection {
  connection: ConnectionView;
  check: ConnectionCheckOk;
}

/**
 * Adds a connection: validates the token's format and the name, runs assertSafeBaseUrl() and a
 * live checkConnection(), and only when both pass stores it (token encrypted, bound to its row).
 * Throws VaultError (format, URL or check failures: nothing is stored) or DbConflictError
 * `connection_name_taken`.
 */
export async function saveConnection(input: SaveConnectionInput, opts: VaultOptions = {}): Promise<SavedConnection> {
  const token = normalizeToken(input.token);
  const name = normalizeName(input.name);
  const db = await dbOf(opts);
  const taken = (await listConnections(db, input.userId)).some((c) => c.name === name);
  if (taken)
    throw new DbConflictError(
      "connection_name_taken",
      `you already have a connection named "${name}"; pick another name or replace its token`,
    );
  const safe = await safeUrl(input.baseUrl, opts);
  const check = await checked(safe, token, opts);
  return store(db, { ...input, name, token, baseUrl: safe.baseUrl }, check, opts);
}

async function store(
  db: Db,
  input: SaveConnectionInput,
  check: ConnectionCheckOk,
  opts: VaultOptions,
  engineTokenId: string | null = null,
): Promise<SavedConnection> {
  const conn = await upsertConnection(db, {
    userId: input.userId,
    teamId: input.teamId,
    name: input.name,
    baseUrl: input.baseUrl,
    token: input.token,
    activate: input.activate,
    engineTokenId,
  });
  await recordConnectionCheck(db, input.userId, conn.id, null);
  return { connection: await reread(db, input.userId, conn.id, opts), check };
}

/**
 * Replaces a connection's token after checking the new one against the connection's base URL
 * (SSRF check included). The old token stays when the check fails.
 */
export async function replaceToken(
  input: { userId: string; connectionId: string; token: string },
  opts: VaultOptions = {},
): Promise<SavedConnection> {
  const token = normalizeToken(input.token);
  const db = await dbOf(opts);
  const conn = await getConnection(db, input.userId, input.connectionId);
  if (!conn) throw new DbNotFoundError("connection");
  const safe = await safeUrl(conn.baseUrl, opts);
  const check = await checked(safe, token, opts);
  await updateConnection(db, input.userId, conn.id, { token });
  await recordConnectionCheck(db, input.userId, conn.id, null);
  // The engine token it held is no longer in the vault: nothing may keep using it.
  if (conn.engineTokenId) await revokeQuietly(conn.engineTokenId);
  return { connection: await reread(db, input.userId, conn.id, opts), check };
}

/**
 * Revokes a local-engine token the vault no longer holds. The vault row is gone or replaced
 * already, so the token is unreachable through Baton either way; when the engine is down the
 * failure is logged (the engine refuses nothing it cannot be told about) rather than undoing that.
 */
async function revokeQuietly(engineTokenId: string): Promise<void> {
  try {
    await revokeLocalEngineToken(engineTokenId);
  } catch (err) {
    console.error(`[baton] could not revoke local engine token ${engineTokenId}: ${(err as Error).message}`);
  }
}

/**
 * Removes one of the user's connections. When it was the active one, the most recently updated
 * remaining connection becomes active; returns that (or null when none is left).
 */
export async function removeConnection(
  userId: string,
  connectionId: string,
  opts: VaultOptions = {},
): Promise<{ active: ConnectionView | null }> {
  const db = await dbOf(opts);
  const conn = await getConnection(db, userId, connectionId);
  const removed = conn ? await deleteConnection(db, userId, connectionId) : false;
  if (!removed) throw new DbNotFoundError("connection");
  if (conn?.engineTokenId) await revokeQuietly(conn.engineTokenId);
  const active = await getActiveConnection(db, userId);
  return { active: active ? toView(active, opts) : null };
}

/** Makes one of the user's connections the active one (atomically; the others become inactive). */
export async function setActive(
  userId: string,
  connectionId: string,
  opts: VaultOptions = {},
): Promise<ConnectionView> {
  const conn = await setActiveConnection(await dbOf(opts), userId, connectionId);
  return toView(conn, opts);
}

/**
 * The scopes a user's local-engine token for `teamId` may carry: their role's there
 * (rbac.ts engineScopesFor: a viewer's is read-only); every scope for their own account (no team).
 * Throws DbNotFoundError for a team they are not a member of: no token of a team for a non-member.
 */
async function engineScopesOf(db: Db, userId: string, teamId: string | null): Promise<readonly EngineScope[]> {
  if (teamId === null) return LOCAL_ENGINE_SCOPES;
  const membership = await getMembership(db, teamId, userId);
  if (!membership)
    throw new DbNotFoundError(
      "membership",
      "you are not a member of this team, so Baton cannot connect you to its engine",
    );
  return engineScopesFor(membership.role);
}

/**
 * "Use the local engine": mints a token on the local engine with its bootstrap secret, in the
 * engine account of the user's team (its members share its sandboxes, each with a token of their
 * own, labelled with who holds it) with the scopes of their role there, checks it, and saves it as
 * the active connection named "Local engine". A token that connection held before is revoked.
 * Throws LocalEngineError when the engine is not available.
 */
export async function connectLocalEngine(
  userId: string,
  opts: VaultOptions & { name?: string; teamId?: string | null; label?: string } = {},
): Promise<SavedConnection> {
  const db = await dbOf(opts);
  const teamId = opts.teamId ?? null;
  const name = normalizeName(opts.name ?? (await localEngineConnectionName(db, userId, teamId)));
  const origin = localEngineOrigin();
  const safe = await safeUrl(origin, opts);
  const minted = await mintLocalEngineToken({
    account: engineAccountFor(teamId, userId),
    label: `baton: ${opts.label ?? userId}`,
    scopes: await engineScopesOf(db, userId, teamId),
  });
  let check: ConnectionCheckOk;
  try {
    check = await checked(safe, minted.token, opts);
  } catch (err) {
    await revokeQuietly(minted.id);
    throw err;
  }
  const before = (await listConnections(db, userId)).find((c) => c.name === name);
  const saved = await store(
    db,
    { userId, name, baseUrl: safe.baseUrl, token: minted.token, teamId, activate: true },
    check,
    opts,
    minted.id,
  );
  if (before?.engineTokenId && before.engineTokenId !== minted.id) await revokeQuietly(before.engineTokenId);
  return saved;
}

/**
 * The name of a user's local-engine connection for `teamId`: each team has its own (an engine
 * account per team), so connecting in a second team must not replace the first one's. The name
 * the team's one already has; else "Local engine" while no other team's connection holds it; else
 * "Local engine (<team slug>)".
 */
async function localEngineConnectionName(db: Db, userId: string, teamId: string | null): Promise<string> {
  const mine = await listConnections(db, userId);
  const sameTeam = mine.find((c) => c.engineTokenId !== null && c.teamId === teamId);
  if (sameTeam) return sameTeam.name;
  const holder = mine.find((c) => c.name === LOCAL_ENGINE_CONNECTION_NAME);
  if (!holder || holder.teamId === teamId) return LOCAL_ENGINE_CONNECTION_NAME;
  const team = teamId ? await getTeam(db, teamId) : null;
  return `${LOCAL_ENGINE_CONNECTION_NAME} (${team?.slug ?? "personal"})`;
}

/**
 * Revokes, on the local engine, every engine token a user's connections hold (those made for
 * `teamId` only, when given) and deletes those connections: a member who left a team, or a user
 * who was disabled, keeps no working access to the team's sandboxes. Returns how many went.
 */
export async function revokeEngineAccess(
  userId: string,
  opts: VaultOptions & { teamId?: string } = {},
): Promise<number> {
  const db = await dbOf(opts);
  const held = await listEngineTokenConnections(db, { userId, teamId: opts.teamId });
  for (const conn of held) {
    await deleteConnection(db, userId, conn.id);
    await revokeQuietly(conn.engineTokenId!);
  }
  return held.length;
}

/**
 * After a member's role in `teamId` changed to `role`: each local-engine token they hold for that
 * team is replaced by one with exactly the new role's scopes, and the old one revoked on the engine
 * at once. Narrowed to viewer, the write token they held stops working (even a copy taken out
 * before), while they keep reading through the new one. A token that cannot be replaced (the
 * engine is down) goes with its connection, as on removal: nothing keeps more than the role allows.
 * Returns how many tokens were revoked.
 */
export async function rescopeEngineAccess(
  userId: string,
  opts: VaultOptions & { teamId: string; role: Role },
): Promise<number> {
  const db = await dbOf(opts);
  const held = await listEngineTokenConnections(db, { userId, teamId: opts.teamId });
  if (held.length === 0) return 0;
  const user = await findUserById(db, userId);
  for (const conn of held) {
    let minted: { token: string; id: string } | null = null;
    try {
      minted = await mintLocalEngineToken({
        account: engineAccountFor(opts.teamId, userId),
        label: `baton: ${user?.email ?? userId}`,
        scopes: engineScopesFor(opts.role),
      });
      await updateConnection(db, userId, conn.id, { token: minted.token, engineTokenId: minted.id });
    } catch (err) {
      console.error(`[baton] could not give connection ${conn.id} a token for the new role: ${(err as Error).message}`);
      if (minted) await revokeQuietly(minted.id);
      await deleteConnection(db, userId, conn.id);
    }
    await revokeQuietly(conn.engineTokenId!);
  }
  return held.length;
}
