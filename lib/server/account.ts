import "server-only";
import { sessionOf, type CurrentUser } from "./auth";
import { hashPassword, verifyPassword } from "./crypto";
import type { Db } from "./db/index";
import { hitRateLimit, resetRateLimit } from "./db/rate-limit";
import { listActiveSessions, revokeAllSessionsForUser, revokeSessionById } from "./db/sessions";
import { getUserCredentials, setPasswordHash, updateUserName } from "./db/users";
import { AppError } from "./errors";
import { clearPendingLogins } from "./pending-login-cookie";
import { verifySecondFactor } from "./second-factor";
import { inWords } from "./sign-in";
import type { SessionDto } from "../validations/account";

// "Your account" (/settings): the user's own name, password, sessions and second factor. Every
// check of a secret here (current password, a code) is limited per user, like sign-in is per
// address: a session left open on a shared computer does not allow guessing the password.

export const ACCOUNT_CHECK_LIMIT = { limit: 10, windowMs: 15 * 60_000 } as const;
const checkKey = (userId: string) => `account:check:${userId}`;

/** Counts one check of a password or code for the user; refuses past the limit (429). */
async function countCheck(db: Db, userId: string, now: number): Promise<void> {
  const hit = await hitRateLimit(db, checkKey(userId), { ...ACCOUNT_CHECK_LIMIT, now });
  if (!hit.allowed)
    throw new AppError("rate_limited", `Too many attempts. Try again in ${inWords(hit.retryAfterMs)}.`, {
      retryAfterSeconds: Math.max(1, Math.ceil(hit.retryAfterMs / 1000)),
    });
}

export async function updateProfile(db: Db, current: CurrentUser, name: string, now = Date.now()) {
  const before = current.user.name;
  await updateUserName(db, current.user.id, name, now);
  return { before: { name: before }, after: { name: name.trim() } };
}

/** Whether the user has a password (accounts made through SSO may have none). */
export async function hasPassword(db: Db, current: CurrentUser): Promise<boolean> {
  const credentials = await getUserCredentials(db, current.user.email);
  return credentials?.user.id === current.user.id && credentials.passwordHash !== null;
}

/** Checks the user's current password (limited); throws wrong_password / no_password. */
export async function checkCurrentPassword(db: Db, current: CurrentUser, password: string, now = Date.now()) {
  const credentials = await getUserCredentials(db, current.user.email);
  if (!credentials || credentials.user.id !== current.user.id || credentials.passwordHash === null)
    throw new AppError(
      "no_password",
      "Your account has no password: you sign in through your team's identity provider.",
    );
  await countCheck(db, current.user.id, now);
  if (!(await verifyPassword(password, credentials.passwordHash)))
    throw new AppError("wrong_password", "Current password: is not right.", {
      errors: { current_password: "is not right" },
    });
  await resetRateLimit(db, checkKey(current.user.id));
}

/** Checks a code of the user's second factor (limited) and spends it; throws wrong_code. */
export async function checkOwnCode(
  db: Db,
  current: CurrentUser,
  code: string,
  opts: { recovery?: boolean; now?: number } = {},
): Promise<void> {
  const now = opts.now ?? Date.now();
  await countCheck(db, current.user.id, now);
  const method = await verifySecondFactor(db, current.user.id, code, { recovery: opts.recovery, now });
  if (!method)
    throw new AppError("wrong_code", "Code: is not right. Enter the current code from your authenticator app.", {
      errors: { code: "is not right" },
    });
  await resetRateLimit(db, checkKey(current.user.id));
}

/**
 * Changes the password: the current one is required. Every other session of the user is signed
 * out (and any sign-in waiting for its second factor); this one stays. Returns how many ended.
 */
export async function changePassword(
  db: Db,
  current: CurrentUser,
  input: { currentPassword: string; newPassword: string },
  now = Date.now(),
): Promise<{ sessionsRevoked: number }> {
  await checkCurrentPassword(db, current, input.currentPassword, now);
  await setPasswordHash(db, current.user.id, await hashPassword(input.newPassword), now);
  await clearPendingLogins(db, current.user.id);
  const sessionsRevoked = await revokeAllSessionsForUser(db, current.user.id, {
    exceptSessionId: sessionOf(current).id,
    now,
  });
  return { sessionsRevoked };
}

export async function ownSessions(db: Db, current: CurrentUser): Promise<SessionDto[]> {
  const sessions = await listActiveSessions(db, current.user.id);
  return sessions.map((s) => ({
    id: s.id,
    current: s.id === sessionOf(current).id,
    created_at: s.createdAt.toISOString(),
    last_seen_at: s.lastSeenAt.toISOString(),
    expires_at: s.expiresAt.toISOString(),
    ip: s.ip,
    user_agent: s.userAgent,
  }));
}

/** Signs out one of the user's own sessions; false when it is not theirs or already ended. */
export function revokeOwnSession(db: Db, current: CurrentUser, sessionId: string): Promise<boolean> {
  return revokeSessionById(db, sessionId, current.user.id);
}
