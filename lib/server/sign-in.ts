import "server-only";
import { hashPassword, needsRehash, PasswordWorkBusyError, verifyPassword } from "./crypto";
import { recordAudit } from "./db/audit";
import type { Db } from "./db/index";
import { hitRateLimit, refundRateLimit, resetRateLimit, type RateLimitResult } from "./db/rate-limit";
import { createSession, type Session } from "./db/sessions";
import { issueDeviceToken, verifyDeviceToken } from "./device-trust";
import { getUserCredentials, normalizeEmail, setPasswordHash, type User } from "./db/users";
import { AppError } from "./errors";
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

export type SignInOutcome =
  | {
      ok: true;
      user: User;
      session: Session;
      token: string;
      /** The device cookie's value for this browser and address (new, or the one it presented). */
      deviceToken: string;
    }
  | SignInFailure;

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
      await audit(db, {
        action: "auth.sign_in_failed",
        ip: input.ip,
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
        ip: input.ip,
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
      ip: input.ip,
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
      ip: input.ip,
      data: { email, reason: "disabled" },
      now,
    });
    return { ok: false, reason: "account_disabled" };
  }

  // A known device clears its own counter only: the strangers' count against the address stays.
  await resetRateLimit(db, account.key);
  await refundRateLimit(db, ipKey);
  if (passwordHash !== null && needsRehash(passwordHash))
    await setPasswordHash(db, user.id, await hashPassword(input.password), now);
  const { token, session } = await createSession(db, {
    userId: user.id,
    ip: input.ip,
    userAgent: input.userAgent,
    now,
  });
  await audit(db, {
    action: "auth.sign_in",
    userId: user.id,
    ip: input.ip,
    data: { method: "password", known_device: deviceId !== null },
    now,
  });
  if (breakGlass)
    await audit(db, {
      action: "auth.break_glass",
      userId: user.id,
      teamId: enforcing!.teamId,
      ip: input.ip,
      data: { email, reason: "password sign-in of the owner of a team that enforces SSO" },
      now,
    });
  return { ok: true, user, session, token, deviceToken: deviceId ? input.deviceToken! : issueDeviceToken(email) };
}

/** A wait in whole seconds or minutes, for a rate-limit message. */
export function inWords(ms: number): string {
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
