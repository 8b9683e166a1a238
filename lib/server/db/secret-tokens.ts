import "server-only";
import { sql, type RawBuilder, type SqlBool } from "kysely";
import { randomToken, sha256 } from "../crypto";

// Rows found by a secret someone holds: a session by its cookie, an invitation by its link. The
// secret is 32 random bytes in base64url, handed out once; the table keeps only its SHA-256, so a
// database leak yields no usable cookie or link. Such a row is in force until it ends (revoked,
// accepted) or its `expires_at` passes.

/** Each table's column that ends a row before it expires. */
const ENDED_COLUMN = { sessions: "revoked_at", invitations: "accepted_at" } as const;
export type SecretTable = keyof typeof ENDED_COLUMN;

/** 32 bytes in base64url: anything else cannot be one of our secrets, and skips the query. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** A new secret (to hand out, never stored) and the hash to store for it. */
export function newSecretToken(): { token: string; hash: string } {
  const token = randomToken(32);
  return { token, hash: sha256(token) };
}

/** The stored hash of a presented secret, or null when it cannot be one. */
export function secretTokenHash(token: string): string | null {
  return TOKEN_SHAPE.test(token) ? sha256(token) : null;
}

/** A `where` condition: the table's rows still in force at `now` (not ended, not expired). */
export function inForce(table: SecretTable, now: number): RawBuilder<SqlBool> {
  const ended = sql.ref(`${table}.${ENDED_COLUMN[table]}`);
  return sql<SqlBool>`${ended} is null and ${sql.ref(`${table}.expires_at`)} > ${now}`;
}
