import "server-only";
import type { Db } from "./db/index";
import { newSecretToken, secretTokenHash } from "./db/secret-tokens";

// The step between "the password was right" and "signed in", for an account with a second factor
// (lib/server/second-factor.ts). POST /api/auth/login answers `{ second_factor_required: true }` and
// sets this cookie instead of a session: a random token whose sha256 names a `pending_logins` row
// (user, the limiter key of the password step, expiry). POST /api/auth/login/second-factor takes
// the cookie and a code. The row lives 5 minutes and allows 5 codes; it is deleted when used, so a
// pending cookie signs in at most once. The cookie is sent only to the sign-in routes.

export const PENDING_LOGIN_COOKIE = "baton-pending-login";
export const SECURE_PENDING_LOGIN_COOKIE = "__Secure-baton-pending-login";
export const PENDING_LOGIN_PATH = "/api/auth/login";
export const PENDING_LOGIN_TTL_MS = 5 * 60_000;
export const PENDING_LOGIN_MAX_ATTEMPTS = 5;

export interface PendingLogin {
  id: string;
  userId: string;
  rateKey: string;
  deviceToken: string | null;
  attempts: number;
  expiresAt: number;
}

export async function createPendingLogin(
  db: Db,
  input: {
    userId: string;
    rateKey: string;
    deviceToken: string | null;
    ip: string | null;
    userAgent: string | null;
    now?: number;
  },
): Promise<string> {
  const now = input.now ?? Date.now();
  const { token, hash } = newSecretToken();
  // Expired rows of anyone go now: the table only ever holds a few minutes of sign-ins.
  await db.deleteFrom("pending_logins").where("expires_at", "<=", now).execute();
  await db
    .insertInto("pending_logins")
    .values({
      id: hash,
      user_id: input.userId,
      rate_key: input.rateKey,
      device_token: input.deviceToken,
      attempts: 0,
      ip: input.ip?.slice(0, 64) ?? null,
      user_agent: input.userAgent?.slice(0, 512) ?? null,
      created_at: now,
      expires_at: now + PENDING_LOGIN_TTL_MS,
    })
    .execute();
  return token;
}

/** The pending sign-in behind a cookie token, while it is in force (not expired, attempts left). */
export async function findPendingLogin(db: Db, token: string | null, now = Date.now()): Promise<PendingLogin | null> {
  const id = token ? secretTokenHash(token) : null;
  if (!id) return null;
  const row = await db
    .selectFrom("pending_logins")
    .select(["id", "user_id", "rate_key", "device_token", "attempts", "expires_at"])
    .where("id", "=", id)
    .where("expires_at", ">", now)
    .where("attempts", "<", PENDING_LOGIN_MAX_ATTEMPTS)
    .executeTakeFirst();
  return row
    ? {
        id: row.id,
        userId: row.user_id,
        rateKey: row.rate_key,
        deviceToken: row.device_token,
        attempts: Number(row.attempts),
        expiresAt: Number(row.expires_at),
      }
    : null;
}

/** Counts a wrong code; returns the attempts left (0: the pending sign-in is over). */
export async function countPendingAttempt(db: Db, pending: PendingLogin): Promise<number> {
  await db
    .updateTable("pending_logins")
    .set((eb) => ({ attempts: eb("attempts", "+", 1) }))
    .where("id", "=", pending.id)
    .execute();
  const left = PENDING_LOGIN_MAX_ATTEMPTS - (pending.attempts + 1);
  if (left <= 0) await db.deleteFrom("pending_logins").where("id", "=", pending.id).execute();
  return Math.max(0, left);
}

/** Ends a pending sign-in; true only for the one caller that deleted it (a cookie signs in once). */
export async function consumePendingLogin(db: Db, pending: PendingLogin): Promise<boolean> {
  const res = await db.deleteFrom("pending_logins").where("id", "=", pending.id).executeTakeFirst();
  return res.numDeletedRows > 0n;
}

/** Every pending sign-in of a user (password changed, second factor turned off). */
export async function clearPendingLogins(db: Db, userId: string): Promise<void> {
  await db.deleteFrom("pending_logins").where("user_id", "=", userId).execute();
}

export function pendingLoginCookie(token: string, secure: boolean): string {
  return [
    `${secure ? SECURE_PENDING_LOGIN_COOKIE : PENDING_LOGIN_COOKIE}=${token}`,
    `Path=${PENDING_LOGIN_PATH}`,
    `Max-Age=${Math.floor(PENDING_LOGIN_TTL_MS / 1000)}`,
    "HttpOnly",
    "SameSite=Strict",
    ...(secure ? ["Secure"] : []),
  ].join("; ");
}

export function clearPendingLoginCookie(secure: boolean): string {
  return [
    `${secure ? SECURE_PENDING_LOGIN_COOKIE : PENDING_LOGIN_COOKIE}=`,
    `Path=${PENDING_LOGIN_PATH}`,
    "Max-Age=0",
    "HttpOnly",
    "SameSite=Strict",
    ...(secure ? ["Secure"] : []),
  ].join("; ");
}

/** The pending token a request's Cookie header carries (either name), or null. */
export function readPendingLoginToken(cookieHeader: string | null | undefined): string | null {
  const values = new Map<string, string>();
  for (const part of (cookieHeader ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0) values.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return values.get(SECURE_PENDING_LOGIN_COOKIE) || values.get(PENDING_LOGIN_COOKIE) || null;
}
