import "server-only";
import { hashPassword, needsRehash, verifyPassword } from "./crypto.js";
import { recordAudit } from "./db/audit.js";
import type { Db } from "./db/index.js";
import { hitRateLimit, refundRateLimit, resetRateLimit, type RateLimitResult } from "./db/rate-limit.js";
import { createSession, type Session } from "./db/sessions.js";
import { getUserCredentials, normalizeEmail, setPasswordHash, type User } from "./db/users.js";
import { AppError } from "./errors.js";

// Email + password sign-in, the one place that checks a password. next-auth's Credentials provider
// calls it from `authorize` (lib/server/next-auth.ts), whichever route the attempt came through.
//
// Rate limits: every attempt counts against its email address and its client IP *before* the
// password is checked (so parallel attempts cannot slip past the limit); a successful attempt then
// clears its email's counter and takes its own hit back from the IP's. What remains are failures:
// a wrong password ten times for one address, or thirty times from one address, in 15 minutes.
// Unknown addresses are limited like known ones, and answered with the same message in the same time.

export const SIGN_IN_LIMITS = {
  email: { limit: 10, windowMs: 15 * 60_000 },
  ip: { limit: 30, windowMs: 15 * 60_000 },
} as const;

export type SignInFailure =
  | { ok: false; reason: "invalid_credentials" }
  | { ok: false; reason: "account_disabled" }
  | { ok: false; reason: "rate_limited"; retryAfterMs: number };

export type SignInOutcome = { ok: true; user: User; session: Session; token: string } | SignInFailure;

export interface SignInInput {
  email: string;
  password: string;
  ip: string | null;
  userAgent: string | null;
  now?: number;
}

export const emailRateKey = (email: string) => `signin:email:${normalizeEmail(email)}`;
export const ipRateKey = (ip: string | null) => `signin:ip:${ip ?? "unknown"}`;

async function audit(db: Db, input: Parameters<typeof recordAudit>[1]): Promise<void> {
  try {
    await recordAudit(db, input);
  } catch (err) {
    console.error("[baton] could not record an audit event:", err);
  }
}

const blocked = (result: RateLimitResult): boolean => !result.allowed;

export async function signInWithPassword(db: Db, input: SignInInput): Promise<SignInOutcome> {
  const now = input.now ?? Date.now();
  const email = normalizeEmail(input.email);
  const ipKey = ipRateKey(input.ip);
  const emailKey = emailRateKey(email);

  const byIp = await hitRateLimit(db, ipKey, { ...SIGN_IN_LIMITS.ip, now });
  const byEmail = blocked(byIp) ? null : await hitRateLimit(db, emailKey, { ...SIGN_IN_LIMITS.email, now });
  const limiting =
    byEmail === null
      ? { result: byIp, limit: SIGN_IN_LIMITS.ip.limit }
      : blocked(byEmail)
        ? { result: byEmail, limit: SIGN_IN_LIMITS.email.limit }
        : null;
  if (limiting) {
    // One audit event per window and key, not one per hammering request.
    if (limiting.result.count === limiting.limit + 1) {
      await audit(db, { action: "auth.sign_in_failed", ip: input.ip, data: { email, reason: "rate_limited", by: byEmail === null ? "ip" : "email" }, now });
    }
    return { ok: false, reason: "rate_limited", retryAfterMs: limiting.result.retryAfterMs };
  }

  const credentials = await getUserCredentials(db, email);
  // Unknown address and account without a password check a dummy hash: same answer, same time.
  const passwordOk = await verifyPassword(input.password, credentials?.passwordHash ?? null);
  if (!credentials || !passwordOk) {
    const reason = !credentials ? "unknown_email" : credentials.passwordHash === null ? "no_password" : "wrong_password";
    await audit(db, { action: "auth.sign_in_failed", userId: credentials?.user.id ?? null, ip: input.ip, data: { email, reason }, now });
    return { ok: false, reason: "invalid_credentials" };
  }
  const { user, passwordHash } = credentials;
  if (user.disabledAt !== null) {
    // Only someone who knows the password learns that the account exists and is disabled.
    await audit(db, { action: "auth.sign_in_failed", userId: user.id, ip: input.ip, data: { email, reason: "disabled" }, now });
    return { ok: false, reason: "account_disabled" };
  }

  await resetRateLimit(db, emailKey);
  await refundRateLimit(db, ipKey);
  if (passwordHash !== null && needsRehash(passwordHash)) await setPasswordHash(db, user.id, await hashPassword(input.password), now);
  const { token, session } = await createSession(db, { userId: user.id, ip: input.ip, userAgent: input.userAgent, now });
  await audit(db, { action: "auth.sign_in", userId: user.id, ip: input.ip, data: { method: "password" }, now });
  return { ok: true, user, session, token };
}

function inWords(ms: number): string {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  if (seconds < 60) return `${seconds} second${seconds === 1 ? "" : "s"}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? "" : "s"}`;
}

/** The API error for a failed sign-in: one message for wrong email and wrong password. */
export function signInError(failure: SignInFailure): AppError {
  switch (failure.reason) {
    case "rate_limited":
      return new AppError("rate_limited", `Too many sign-in attempts. Try again in ${inWords(failure.retryAfterMs)}.`, {
        retryAfterSeconds: Math.max(1, Math.ceil(failure.retryAfterMs / 1000)),
      });
    case "account_disabled":
      return new AppError("account_disabled", "This account is disabled. Ask an owner or admin of your team to enable it again.");
    case "invalid_credentials":
      return new AppError("invalid_credentials", "Wrong email or password.");
  }
}
