import "server-only";
import { recordAudit } from "./db/audit";
import type { Db } from "./db/index";
import { hitRateLimit, refundRateLimit } from "./db/rate-limit";
import { AppError } from "./errors";
import { checkSetupCode } from "./setup-code";
import { inWords } from "./sign-in";

// The first-run setup code, tried as a password is (lib/server/sign-in.ts): every attempt counts
// against its client IP in the shared rate-limit table *before* the code is compared (so parallel
// attempts cannot slip past), a right code takes its hit back, and what remains are failures: ten
// wrong codes from one address in 15 minutes lock that address out until the window ends (429 with
// Retry-After). Each wrong code is audited as `auth.setup_failed`, the lockout once per window.
// The code has about 59 bits, so this is not what keeps it from being guessed: it keeps a
// stranger's guessing loud and slow while the owner has not set Baton up yet.

export const SETUP_CODE_LIMITS = { limit: 10, windowMs: 15 * 60_000 };

export const setupRateKey = (ip: string | null) => `setup:ip:${ip ?? "unknown"}`;

export type SetupCodeOutcome =
  { ok: true } | { ok: false; reason: "bad_setup_code" } | { ok: false; reason: "rate_limited"; retryAfterMs: number };

async function audit(db: Db, ip: string | null, reason: string, now: number): Promise<void> {
  try {
    await recordAudit(db, { action: "auth.setup_failed", ip, data: { reason }, now });
  } catch (err) {
    console.error("[baton] could not record an audit event:", err);
  }
}

/** Whether `code` is the setup code, within the client address's budget of wrong ones. */
export async function attemptSetupCode(
  db: Db,
  input: { code: string | null | undefined; ip: string | null; now?: number },
): Promise<SetupCodeOutcome> {
  const now = input.now ?? Date.now();
  const key = setupRateKey(input.ip);
  const hit = await hitRateLimit(db, key, { ...SETUP_CODE_LIMITS, now });
  if (!hit.allowed) {
    // One audit event per window, not one per hammering request.
    if (hit.count === SETUP_CODE_LIMITS.limit + 1) await audit(db, input.ip, "rate_limited", now);
    return { ok: false, reason: "rate_limited", retryAfterMs: hit.retryAfterMs };
  }
  if (!(await checkSetupCode(db, input.code))) {
    await audit(db, input.ip, "bad_setup_code", now);
    return { ok: false, reason: "bad_setup_code" };
  }
  await refundRateLimit(db, key);
  return { ok: true };
}

/** The API error for a refused setup code. */
export function setupCodeError(failure: Exclude<SetupCodeOutcome, { ok: true }>): AppError {
  if (failure.reason === "rate_limited")
    return new AppError(
      "rate_limited",
      `Too many wrong setup codes from this address. Try again in ${inWords(failure.retryAfterMs)}, with the code the Baton server printed in its log (also in the file setup-code in its data directory).`,
      { retryAfterSeconds: Math.max(1, Math.ceil(failure.retryAfterMs / 1000)) },
    );
  return new AppError(
    "bad_setup_code",
    "That is not the setup code. The Baton server printed it in its log when it started; it is also in the file setup-code in its data directory.",
    { errors: { setup_code: "is not the code the server printed" } },
  );
}
