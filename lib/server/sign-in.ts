import "server-only";
import { hashPassword, needsRehash, PasswordWorkBusyError, verifyPassword } from "./crypto";
import { recordAuditForUserTeams, type AuditInput } from "./db/audit";
import type { Db } from "./db/index";
import { hitRateLimit, refundRateLimit, resetRateLimit, type RateLimitResult } from "./db/rate-limit";
import { createSession, type Session } from "./db/sessions";
import { issueDeviceToken, verifyDeviceToken } from "./device-trust";
import { findUserById, getUserCredentials, normalizeEmail, setPasswordHash, type User } from "./db/users";
import { AppError } from "./errors";
import { consumePendingLogin, countPendingAttempt, createPendingLogin, findPendingLogin } from "./pending-login-cookie";
import { hasSecondFactor, verifySecondFactor, type SecondFactorMethod } from "./second-factor";
import { ssoMessage } from "../sso-messages";
import { enforcingTeamForEmail } from "./db/sso";
import { getMembership } from "./db/teams";

// Email + password sign-in, the one place that checks a password. next-auth's Credentials provider
// calls it from `authorize` (lib/server/next-auth.ts), whichever route the attempt came through.
//
// Rate limits: every attempt counts against its client IP and against its email address *before*
// the password is checked (so parallel attempts cannot slip past the limit); a successful attempt
// then clears its counter and takes its own hit back from the IP's. What remains are failures: a
// wrong password ten times for one address, or thirty times from one client IP, in 15 minutes.
// Unknown addresses are limited like known ones, and answered with the same message in the same time.
//
// The per-email limit must stop guessing from many addresses, yet must not let a stranger lock the
// owner out by hammering their address. So attempts from a browser that has signed in to this
// address before (its device cookie, lib/server/device-trust.ts; OWASP's "device cookies") count
// against that device instead of the address: the owner signs in while strangers are limited.
// Letting any right password through the per-email limit was the other option, and would have let
// a botnet's guesses through until one was right. The per-IP limit applies to every attempt.

export const SIGN_IN_LIMITS = {
  email: { limit: 10, windowMs: 15 * 60_000 },
  ip: { limit: 30, windowMs: 15 * 60_000 },
  /** A browser with a device cookie for the address: instead of the address's limit. */
  device: { limit: 10, windowMs: 15 * 60_000 },
} as const;

export type SignInFailure =
  | { ok: false; reason: "invalid_credentials" }
  | { ok: false; reason: "account_disabled" }
  | { ok: false; reason: "sso_required"; team: string }
  | { ok: false; reason: "rate_limited"; retryAfterMs: number };

export interface SignInSuccess {
  ok: true;
  user: User;
  session: Session;
  token: string;
  /** The device cookie's value for this browser and address (new, or the one it presented). */
  deviceToken: string;
}

/**
 * The password was right and the account has a second factor: no session yet. `pendingToken` goes
 * into the pending cookie (lib/server/pending-login-cookie.ts) for POST /api/auth/login/second-factor.
 */
export interface SecondFactorRequired {
  ok: false;
  reason: "second_factor_required";
  user: User;
  pendingToken: string;
}

export type SignInOutcome = SignInSuccess | SecondFactorRequired | SignInFailure;

export interface SignInInput {
  email: string;
  password: string;
  ip: string | null;
  userAgent: string | null;
  /** The device cookie the browser sent, if any (lib/server/device-trust.ts). */
  deviceToken?: string | null;
  now?: number;
}

export const emailRateKey = (email: string) => `signin:email:${normalizeEmail(email)}`;
export const ipRateKey = (ip: string | null) => `signin:ip:${ip ?? "unknown"}`;
export const deviceRateKey = (deviceId: string) => `signin:device:${deviceId}`;

/** Sign-ins are recorded once per team of the user (each team's admins see them), with the browser. */
async function audit(db: Db, input: AuditInput): Promise<void> {
  try {
    await recordAuditForUserTeams(db, {
      credential: "password",
      targetType: input.userId ? "user" : null,
      targetId: input.userId ?? null,
      ...input,
    });
  } catch (err) {
    console.error("[baton] could not record an audit event:", err);
  }
}

const blocked = (result: RateLimitResult): boolean => !result.allowed;

/**
 * The end of a successful sign-in, with or without a second factor: the account's failure counter
 * is cleared, the IP's attempt refunded, the session made and the sign-in audited.
 */
async function openSession(
  db: Db,
  user: User,
  at: {
    rateKey: string;
    ipKey: string;
    ip: string | null;
    userAgent: string | null;
    data: Record<string, unknown>;
    now: number;
  },
): Promise<{ token: string; session: Session }> {
  await resetRateLimit(db, at.rateKey);
  await refundRateLimit(db, at.ipKey);
  const created = await createSession(db, { userId: user.id, ip: at.ip, userAgent: at.userAgent, now: at.now });
  await audit(db, {
    action: "auth.sign_in",
    userId: user.id,
    actorEmail: user.email,
    ip: at.ip,
    userAgent: at.userAgent,
    data: at.data,
    now: at.now,
  });
  return created;
}

export async function signInWithPassword(db: Db, input: SignInInput): Promise<SignInOutcome> {
  const now = input.now ?? Date.now();
  const email = normalizeEmail(input.email);
  const ipKey = ipRateKey(input.ip);
  const deviceId = verifyDeviceToken(input.deviceToken, email);
  // A known browser is limited per device, anyone else per address (see above).
  const account = deviceId
    ? { key: deviceRateKey(deviceId), by: "device", ...SIGN_IN_LIMITS.device }
    : { key: emailRateKey(email), by: "email", ...SIGN_IN_LIMITS.email };

  const byIp = await hitRateLimit(db, ipKey, { ...SIGN_IN_LIMITS.ip, now });
  const byAccount = blocked(byIp)
    ? null
    : await hitRateLimit(db, account.key, { limit: account.limit, windowMs: account.windowMs, now });
  const limiting =
    byAccount === null
      ? { result: byIp, limit: SIGN_IN_LIMITS.ip.limit, by: "ip" }
      : blocked(byAccount)
        ? { result: byAccount, limit: account.limit, by: account.by }
        : null;
  if (limiting) {
    // One audit event per window and key, not one per hammering request.
    if (limiting.result.count === limiting.limit + 1) {
      const known = await getUserCredentials(db, email).catch(() => null);
      await audit(db, {
        action: "auth.sign_in_failed",
        userId: known?.user.id ?? null,
        actorEmail: email,
        result: "rate_limited",
        ip: input.ip,
        userAgent: input.userAgent,
        data: { email, reason: "rate_limited", by: limiting.by },
        now,
      });
    }
    return { ok: false, reason: "rate_limited", retryAfterMs: limiting.result.retryAfterMs };
  }

  const credentials = await getUserCredentials(db, email);
  // SSO enforcement (lib/server/sso/): an address in a team's approved domain, with that team's SSO
  // enforced, signs in through the IdP. The team's owner keeps password sign-in as the break-glass
  // path (audited below). Decided before the password is checked, for known and unknown addresses alike.
  const enforcing = await enforcingTeamForEmail(db, email);
  let breakGlass = false;
  if (enforcing) {
    const m = credentials ? await getMembership(db, enforcing.teamId, credentials.user.id) : null;
    if (m?.role !== "owner") {
      await refundRateLimit(db, ipKey);
      await refundRateLimit(db, account.key);
      await audit(db, {
        action: "auth.sign_in_failed",
        userId: credentials?.user.id ?? null,
        teamId: enforcing.teamId,
        actorEmail: email,
        result: "sso_required",
        ip: input.ip,
        userAgent: input.userAgent,
        data: { email, reason: "sso_required" },
        now,
      });
      return { ok: false, reason: "sso_required", team: enforcing.slug };
    }
    breakGlass = true;
  }
  // Unknown address and account without a password check a dummy hash: same answer, same time.
  let passwordOk: boolean;
  try {
    passwordOk = await verifyPassword(input.password, credentials?.passwordHash ?? null);
  } catch (err) {
    // Refused before any password was checked (too many at once): this attempt does not count.
    if (err instanceof PasswordWorkBusyError) {
      await refundRateLimit(db, ipKey);
      await refundRateLimit(db, account.key);
    }
    throw err;
  }
  if (!credentials || !passwordOk) {
    const reason = !credentials
      ? "unknown_email"
      : credentials.passwordHash === null
        ? "no_password"
        : "wrong_password";
    await audit(db, {
      action: "auth.sign_in_failed",
      userId: credentials?.user.id ?? null,
      actorEmail: email,
      result: "invalid_credentials",
      ip: input.ip,
      userAgent: input.userAgent,
      data: { email, reason },
      now,
    });
    return { ok: false, reason: "invalid_credentials" };
  }
  const { user, passwordHash } = credentials;
  if (user.disabledAt !== null) {
    // Only someone who knows the password learns that the account exists and is disabled.
    await audit(db, {
      action: "auth.sign_in_failed",
      userId: user.id,
      actorEmail: email,
      result: "account_disabled",
      ip: input.ip,
      userAgent: input.userAgent,
      data: { email, reason: "disabled" },
      now,
    });
    return { ok: false, reason: "account_disabled" };
  }

  if (passwordHash !== null && needsRehash(passwordHash))
    await setPasswordHash(db, user.id, await hashPassword(input.password), now);
  const deviceToken = deviceId ? input.deviceToken! : issueDeviceToken(email);
  // The owner of a team that enforces SSO signed in with the password (the break-glass path): recorded
  // once the password is right, whether or not a second factor follows.
  if (breakGlass)
    await audit(db, {
      action: "auth.break_glass",
      userId: user.id,
      teamId: enforcing!.teamId,
      actorEmail: email,
      ip: input.ip,
      userAgent: input.userAgent,
      data: { email, reason: "password sign-in of the owner of a team that enforces SSO" },
      now,
    });

  if (await hasSecondFactor(db, user.id)) {
    // The code is still to come: the account's counter is cleared only once it is right, and the
    // code step counts against the same limit (a known password does not buy unlimited guesses).
    await refundRateLimit(db, ipKey);
    const pendingToken = await createPendingLogin(db, {
      userId: user.id,
      rateKey: account.key,
      deviceToken,
      ip: input.ip,
      userAgent: input.userAgent,
      now,
    });
    return { ok: false, reason: "second_factor_required", user, pendingToken };
  }

  // A known device clears its own counter only: the strangers' count against the address stays.
  const { token, session } = await openSession(db, user, {
    rateKey: account.key,
    ipKey,
    ip: input.ip,
    userAgent: input.userAgent,
    data: { method: "password", known_device: deviceId !== null },
    now,
  });
  return { ok: true, user, session, token, deviceToken };
}

export type SecondFactorFailure =
  | { ok: false; reason: "sign_in_expired" }
  | { ok: false; reason: "invalid_code"; attemptsLeft: number }
  | { ok: false; reason: "account_disabled" }
  | { ok: false; reason: "rate_limited"; retryAfterMs: number };

export type SecondFactorOutcome = (SignInSuccess & { method: SecondFactorMethod }) | SecondFactorFailure;

/**
 * The second step of a password sign-in: the pending sign-in (its cookie's token) and a code from
 * the authenticator app or a recovery code. Each attempt counts against the client IP's limit and
 * the same account (or device) limit as the password step; five wrong codes end the pending
 * sign-in (the password is asked again). Success clears the counter and creates the session.
 */
export async function completeSecondFactor(
  db: Db,
  input: { pendingToken: string | null; code: string; ip: string | null; userAgent: string | null; now?: number },
): Promise<SecondFactorOutcome> {
  const now = input.now ?? Date.now();
  const pending = await findPendingLogin(db, input.pendingToken, now);
  if (!pending) return { ok: false, reason: "sign_in_expired" };
  const ipKey = ipRateKey(input.ip);
  const limits = pending.rateKey.startsWith("signin:device:") ? SIGN_IN_LIMITS.device : SIGN_IN_LIMITS.email;
  const byIp = await hitRateLimit(db, ipKey, { ...SIGN_IN_LIMITS.ip, now });
  const byAccount = blocked(byIp) ? byIp : await hitRateLimit(db, pending.rateKey, { ...limits, now });
  if (blocked(byAccount)) return { ok: false, reason: "rate_limited", retryAfterMs: byAccount.retryAfterMs };

  const user = await findUserById(db, pending.userId);
  if (!user || user.disabledAt !== null) {
    await consumePendingLogin(db, pending);
    return user ? { ok: false, reason: "account_disabled" } : { ok: false, reason: "sign_in_expired" };
  }
  const method = await verifySecondFactor(db, user.id, input.code, { now });
  if (!method) {
    const attemptsLeft = await countPendingAttempt(db, pending);
    await audit(db, {
      action: "auth.sign_in_failed",
      userId: user.id,
      actorEmail: normalizeEmail(user.email),
      result: "invalid_code",
      ip: input.ip,
      userAgent: input.userAgent,
      data: { email: normalizeEmail(user.email), reason: "wrong_second_factor", attempts_left: attemptsLeft },
      now,
    });
    return { ok: false, reason: "invalid_code", attemptsLeft };
  }
  if (!(await consumePendingLogin(db, pending))) return { ok: false, reason: "sign_in_expired" };
  const { token, session } = await openSession(db, user, {
    rateKey: pending.rateKey,
    ipKey,
    ip: input.ip,
    userAgent: input.userAgent,
    data: { method: "password", second_factor: method },
    now,
  });
  return { ok: true, user, session, token, deviceToken: pending.deviceToken ?? issueDeviceToken(user.email), method };
}

/** The API error for a failed second step. */
export function secondFactorError(failure: SecondFactorFailure): AppError {
  switch (failure.reason) {
    case "sign_in_expired":
      return new AppError("sign_in_expired", "This sign-in has expired. Enter your email and password again.");
    case "invalid_code":
      return new AppError(
        "invalid_code",
        failure.attemptsLeft > 0
          ? "That code is not right. Enter the current code from your authenticator app, or one of your recovery codes."
          : "That code is not right, and this sign-in has ended. Enter your email and password again.",
      );
    case "account_disabled":
    case "rate_limited":
      return signInError(failure);
  }
}

/** A wait in whole seconds or minutes, for a rate-limit message. */
export function inWords(ms: number): string {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  if (seconds < 60) return `${seconds} second${seconds === 1 ? "" : "s"}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? "" : "s"}`;
}

/** The API error for a failed sign-in: one message for wrong email and wrong password. */
export function signInError(failure: SignInFailure | SecondFactorRequired): AppError {
  switch (failure.reason) {
    case "second_factor_required":
      // Callers that can ask for the code answer `second_factor_required` themselves (/api/auth/login).
      return new AppError("invalid_credentials", "This account asks for a code: sign in on the sign-in page.");
    case "rate_limited":
      return new AppError("rate_limited", `Too many sign-in attempts. Try again in ${inWords(failure.retryAfterMs)}.`, {
        retryAfterSeconds: Math.max(1, Math.ceil(failure.retryAfterMs / 1000)),
      });
    case "account_disabled":
      return new AppError(
        "account_disabled",
        "This account is disabled. Ask an owner or admin of your team to enable it again.",
      );
    case "invalid_credentials":
      return new AppError("invalid_credentials", "Wrong email or password.");
    case "sso_required":
      return new AppError("sso_required", ssoMessage("sso_required"));
  }
}
