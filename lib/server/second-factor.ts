import "server-only";
import { decrypt, encrypt, sha256 } from "./crypto";
import type { Db } from "./db/index";
import { DbConflictError, DbNotFoundError } from "./db/errors";
import { newId } from "./ids";
import { matchTotp, newRecoveryCodes, newTotpSecret, normalizeRecoveryCode, TOTP_CODE } from "./totp";

// A user's TOTP second factor and recovery codes, as rows (migrations/0007_account_security.ts).
// The secret is kept encrypted under the vault key and bound to the user (AAD): a row moved to
// another user, or a database read without the key, gives no usable secret. Enrolment is two steps:
// start (a secret, not yet in force) and confirm (a first right code: now in force, recovery codes
// made and shown once). A code is spent by moving `last_step` forward in the same UPDATE that checks
// it was older, so two requests racing with the same code cannot both pass.

export const totpSecretAad = (userId: string) => `user_totp:${userId}`;
const hashCode = (normalized: string) => sha256(`recovery:v1:${normalized}`);

export interface SecondFactorState {
  /** A confirmed second factor: password sign-in asks for a code. */
  enabled: boolean;
  confirmedAt: Date | null;
  /** Enrolment started and not confirmed yet. */
  enrolling: boolean;
  /** Recovery codes not used yet (0 when off). */
  recoveryCodesLeft: number;
}

async function totpRow(db: Db, userId: string) {
  return db
    .selectFrom("user_totp")
    .select(["user_id", "secret_ciphertext", "confirmed_at", "last_step"])
    .where("user_id", "=", userId)
    .executeTakeFirst();
}

export async function secondFactorState(db: Db, userId: string): Promise<SecondFactorState> {
  const row = await totpRow(db, userId);
  const left = await db
    .selectFrom("user_recovery_codes")
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .where("user_id", "=", userId)
    .where("used_at", "is", null)
    .executeTakeFirst();
  const confirmed = row?.confirmed_at !== null && row?.confirmed_at !== undefined;
  return {
    enabled: confirmed,
    confirmedAt: confirmed ? new Date(Number(row!.confirmed_at)) : null,
    enrolling: !!row && !confirmed,
    recoveryCodesLeft: confirmed ? Number(left?.n ?? 0) : 0,
  };
}

export async function hasSecondFactor(db: Db, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom("user_totp")
    .select("user_id")
    .where("user_id", "=", userId)
    .where("confirmed_at", "is not", null)
    .executeTakeFirst();
  return row !== undefined;
}

/** Starts (or restarts) enrolment: a new secret, not in force until confirmed. Refused while one is on. */
export async function startEnrolment(db: Db, userId: string, now = Date.now()): Promise<string> {
  if (await hasSecondFactor(db, userId))
    throw new DbConflictError("totp_enabled", "two-factor authentication is already on; turn it off first");
  const secret = newTotpSecret();
  const secret_ciphertext = encrypt(secret, { aad: totpSecretAad(userId) });
  await db.deleteFrom("user_totp").where("user_id", "=", userId).where("confirmed_at", "is", null).execute();
  await db
    .insertInto("user_totp")
    .values({ user_id: userId, secret_ciphertext, created_at: now, confirmed_at: null, last_step: null })
    .execute();
  return secret;
}

/**
 * Checks a TOTP code against the user's secret (`confirmed`: the one in force, else the one being
 * enrolled) and spends it: the step moves forward atomically. Returns whether it was accepted.
 */
async function spendTotp(db: Db, userId: string, code: string, confirmed: boolean, now: number): Promise<boolean> {
  const row = await totpRow(db, userId);
  if (!row || (row.confirmed_at !== null) !== confirmed) return false;
  const secret = decrypt(row.secret_ciphertext, { aad: totpSecretAad(userId) });
  const lastStep = row.last_step === null ? null : Number(row.last_step);
  const step = await matchTotp(secret, code, { afterStep: lastStep, epochSeconds: Math.floor(now / 1000) });
  if (step === null) return false;
  const res = await db
    .updateTable("user_totp")
    .set({ last_step: step, ...(confirmed ? {} : { confirmed_at: now }) })
    .where("user_id", "=", userId)
    .where((eb) => eb.or([eb("last_step", "is", null), eb("last_step", "<", step)]))
    .where("confirmed_at", confirmed ? "is not" : "is", null)
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}

/** Replaces the user's recovery codes with new ones; returns them (the only time they are seen). */
export async function replaceRecoveryCodes(db: Db, userId: string, now = Date.now()): Promise<string[]> {
  const codes = newRecoveryCodes();
  await db.deleteFrom("user_recovery_codes").where("user_id", "=", userId).execute();
  await db
    .insertInto("user_recovery_codes")
    .values(
      codes.map((code) => ({
        id: newId("rec"),
        user_id: userId,
        code_hash: hashCode(normalizeRecoveryCode(code)!),
        created_at: now,
        used_at: null,
      })),
    )
    .execute();
  return codes;
}

/** Confirms enrolment with a first code; returns the recovery codes, or null for a wrong code. */
export async function confirmEnrolment(
  db: Db,
  userId: string,
  code: string,
  now = Date.now(),
): Promise<string[] | null> {
  const row = await totpRow(db, userId);
  if (!row) throw new DbNotFoundError("two-factor enrolment");
  if (row.confirmed_at !== null) throw new DbConflictError("totp_enabled", "two-factor authentication is already on");
  if (!(await spendTotp(db, userId, code, false, now))) return null;
  return replaceRecoveryCodes(db, userId, now);
}

/** Spends one recovery code of the user (once). */
async function spendRecoveryCode(db: Db, userId: string, code: string, now: number): Promise<boolean> {
  const normalized = normalizeRecoveryCode(code);
  if (!normalized) return false;
  const res = await db
    .updateTable("user_recovery_codes")
    .set({ used_at: now })
    .where("user_id", "=", userId)
    .where("code_hash", "=", hashCode(normalized))
    .where("used_at", "is", null)
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}

export type SecondFactorMethod = "totp" | "recovery_code";

/**
 * Checks and spends a second-factor answer: a 6-digit code from the app, or (when `recovery` is
 * allowed) one of the recovery codes. Returns how it passed, or null.
 */
export async function verifySecondFactor(
  db: Db,
  userId: string,
  code: string,
  opts: { recovery?: boolean; now?: number } = {},
): Promise<SecondFactorMethod | null> {
  const now = opts.now ?? Date.now();
  if (!(await hasSecondFactor(db, userId))) return null;
  const trimmed = code.replace(/\s+/g, "");
  if (TOTP_CODE.test(trimmed)) return (await spendTotp(db, userId, trimmed, true, now)) ? "totp" : null;
  if (opts.recovery !== false && (await spendRecoveryCode(db, userId, code, now))) return "recovery_code";
  return null;
}

/** Turns the second factor off: the secret and every recovery code go. */
export async function removeSecondFactor(db: Db, userId: string): Promise<boolean> {
  const res = await db.deleteFrom("user_totp").where("user_id", "=", userId).executeTakeFirst();
  await db.deleteFrom("user_recovery_codes").where("user_id", "=", userId).execute();
  return res.numDeletedRows > 0n;
}
