import { createHash, timingSafeEqual } from "node:crypto";
import { DEFAULT_ACCOUNT_NAME, type Db } from "./db.js";
import { newId, newSecret } from "../lib/ids.js";

export const SCOPES = ["sandboxes:read", "sandboxes:write"] as const;
export type Scope = (typeof SCOPES)[number];

/** An account name: what `--account` and the admin API take (the console uses one per Baton team). */
export const ACCOUNT_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;

export interface Account {
  id: string;
  name: string;
}

export interface TokenRecord {
  id: string;
  scopes: Scope[];
  hint: string;
  /** The account every resource this token creates or sees belongs to. */
  account: Account;
}

/** What the admin API lists of a token: never its value or hash. */
export interface TokenInfo {
  id: string;
  account: Account;
  scopes: Scope[];
  hint: string;
  label: string | null;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
}

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

/** The account named `name`, made on first use. */
export function ensureAccount(db: Db, name: string): Account {
  if (!ACCOUNT_NAME.test(name))
    throw new Error(`invalid account name "${name}": 1-63 of a-z, 0-9, '.', '_', '-', starting with a letter or digit`);
  const found = findAccount(db, name);
  if (found) return found;
  const id = newId("acc");
  db.prepare("INSERT INTO accounts(id, name, created_at) VALUES (?, ?, ?) ON CONFLICT(name) DO NOTHING").run(
    id,
    name,
    Date.now(),
  );
  return findAccount(db, name)!;
}

export function findAccount(db: Db, name: string): Account | undefined {
  return db.prepare("SELECT id, name FROM accounts WHERE name = ?").get(name) as Account | undefined;
}

export function listAccounts(db: Db): (Account & { created_at: number; tokens: number })[] {
  return db
    .prepare(
      `SELECT a.id, a.name, a.created_at,
              (SELECT COUNT(*) FROM tokens t WHERE t.account_id = a.id AND t.revoked_at IS NULL) AS tokens
       FROM accounts a ORDER BY a.name`,
    )
    .all() as (Account & { created_at: number; tokens: number })[];
}

/**
 * Mints an `ork_…` token of an account (made on first use); only its SHA-256 is stored, so the
 * plain value exists once, in the return. `expiresAt` (ms) makes it stop working by itself.
 */
export function mintToken(
  db: Db,
  scopes: Scope[],
  opts: { label?: string; account?: string; expiresAt?: number | null } = {},
): { token: string; record: TokenRecord; expiresAt: number | null } {
  const account = ensureAccount(db, opts.account ?? DEFAULT_ACCOUNT_NAME);
  const token = newSecret("ork", 24);
  const id = newId("tok");
  const hint = `ork_…${token.slice(-4)}`;
  const expiresAt = opts.expiresAt ?? null;
  db.prepare(
    "INSERT INTO tokens(id, hash, hint, scopes, label, created_at, account_id, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
  ).run(id, sha256(token), hint, scopes.join(","), opts.label ?? null, Date.now(), account.id, expiresAt);
  return { token, record: { id, scopes, hint, account }, expiresAt };
}

interface TokenRow {
  id: string;
  hash: string;
  hint: string;
  scopes: string;
  label: string | null;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  account_id: string;
  account_name: string;
}

const parseScopeList = (s: string) => s.split(",").filter((x): x is Scope => (SCOPES as readonly string[]).includes(x));

/** Why a presented token does not authenticate, for a 401 that says what to do. */
export type TokenRejection = "unknown" | "revoked" | "expired";

/**
 * The token's record, or why it is refused. Read from the database on every request, so a
 * revocation takes effect on the very next one.
 */
export function verifyToken(db: Db, token: string, now = Date.now()): TokenRecord | { rejected: TokenRejection } {
  if (!token.startsWith("ork_") || token.length > 200) return { rejected: "unknown" };
  const hash = sha256(token);
  const row = db
    .prepare("SELECT t.*, a.name AS account_name FROM tokens t JOIN accounts a ON a.id = t.account_id WHERE t.hash = ?")
    .get(hash) as TokenRow | undefined;
  if (!row || !timingSafeEqual(Buffer.from(row.hash), Buffer.from(hash))) return { rejected: "unknown" };
  if (row.revoked_at !== null) return { rejected: "revoked" };
  if (row.expires_at !== null && row.expires_at <= now) return { rejected: "expired" };
  return {
    id: row.id,
    hint: row.hint,
    scopes: parseScopeList(row.scopes),
    account: { id: row.account_id, name: row.account_name },
  };
}

export function listTokens(db: Db, filter: { account?: string } = {}): TokenInfo[] {
  const rows = db
    .prepare(
      `SELECT t.*, a.name AS account_name FROM tokens t JOIN accounts a ON a.id = t.account_id ${filter.account ? "WHERE a.name = ?" : ""} ORDER BY t.id DESC`,
    )
    .all(...(filter.account ? [filter.account] : [])) as TokenRow[];
  return rows.map((r) => ({
    id: r.id,
    account: { id: r.account_id, name: r.account_name },
    scopes: parseScopeList(r.scopes),
    hint: r.hint,
    label: r.label,
    created_at: r.created_at,
    expires_at: r.expires_at,
    revoked_at: r.revoked_at,
  }));
}

/** Revokes a token by id; true when it existed (revoking twice is not an error). */
export function revokeToken(db: Db, id: string, now = Date.now()): boolean {
  const r = db.prepare("UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?").run(now, id);
  return r.changes > 0;
}

export function parseScopes(input: string): Scope[] {
  const scopes = input
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (bad.length) throw new Error(`unknown scope(s): ${bad.join(", ")}; known: ${SCOPES.join(", ")}`);
  if (!scopes.length) throw new Error("at least one scope is required");
  return scopes as Scope[];
}
