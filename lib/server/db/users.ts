import "server-only";
import { z } from "zod";
import { newId } from "../ids";
import { DbConflictError, isUniqueViolation } from "./errors";
import type { Db } from "./index";
import { forgetRemembered } from "../session-cache";
import { EpochDate, parseRow } from "./util";

// Users. Emails are unique case-insensitively through `email_normalized`; the address as typed is
// kept for display. Password hashes never leave this module except through getUserCredentials().

export interface User {
  id: string;
  email: string;
  name: string;
  createdAt: Date;
  updatedAt: Date;
  disabledAt: Date | null;
}

export const UserRow = z
  .object({
    id: z.string().min(1),
    email: z.string().min(1),
    name: z.string(),
    created_at: EpochDate,
    updated_at: EpochDate,
    disabled_at: EpochDate.nullable(),
  })
  .transform((r): User => ({
    id: r.id,
    email: r.email,
    name: r.name,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    disabledAt: r.disabled_at,
  }));

export const USER_COLUMNS = ["id", "email", "name", "created_at", "updated_at", "disabled_at"] as const;

const EmailInput = z
  .string()
  .trim()
  .max(254)
  .pipe(z.email({ error: "not a valid email address" }));
const NameInput = z.string().trim().max(200);

/** The lookup form of an email address: trimmed, NFKC-normalised and lowercased. */
export function normalizeEmail(email: string): string {
  return email.trim().normalize("NFKC").toLowerCase();
}

export interface CreateUserInput {
  email: string;
  name?: string;
  /** From hashPassword(); null for accounts without a password. */
  passwordHash: string | null;
  now?: number;
}

/** Inserts a user. Throws DbConflictError("email_taken") when the address exists in any letter case. */
export async function createUser(db: Db, input: CreateUserInput): Promise<User> {
  const email = EmailInput.parse(input.email);
  const name = NameInput.parse(input.name ?? "");
  const now = input.now ?? Date.now();
  const row = {
    id: newId("usr"),
    email,
    email_normalized: normalizeEmail(email),
    name,
    password_hash: input.passwordHash,
    created_at: now,
    updated_at: now,
    disabled_at: null,
  };
  try {
    await db.insertInto("users").values(row).execute();
  } catch (err) {
    if (isUniqueViolation(err, { index: "users_email_normalized_key", column: "users.email_normalized" })) {
      throw new DbConflictError("email_taken", "an account with this email address already exists", { cause: err });
    }
    throw err;
  }
  return parseRow("users", UserRow, row);
}

export async function findUserById(db: Db, id: string): Promise<User | null> {
  const row = await db.selectFrom("users").select(USER_COLUMNS).where("id", "=", id).executeTakeFirst();
  return row ? parseRow("users", UserRow, row) : null;
}

export async function findUserByEmail(db: Db, email: string): Promise<User | null> {
  const row = await db
    .selectFrom("users")
    .select(USER_COLUMNS)
    .where("email_normalized", "=", normalizeEmail(email))
    .executeTakeFirst();
  return row ? parseRow("users", UserRow, row) : null;
}

/** For sign-in only: the user and their password hash (null when the user has none). */
export async function getUserCredentials(
  db: Db,
  email: string,
): Promise<{ user: User; passwordHash: string | null } | null> {
  const row = await db
    .selectFrom("users")
    .select([...USER_COLUMNS, "password_hash"])
    .where("email_normalized", "=", normalizeEmail(email))
    .executeTakeFirst();
  if (!row) return null;
  const passwordHash = parseRow("users", z.string().min(1).nullable(), row.password_hash);
  return { user: parseRow("users", UserRow, row), passwordHash };
}

export async function setPasswordHash(db: Db, userId: string, passwordHash: string, now = Date.now()): Promise<void> {
  await db
    .updateTable("users")
    .set({ password_hash: passwordHash, updated_at: now })
    .where("id", "=", userId)
    .execute();
}

export async function updateUserName(db: Db, userId: string, name: string, now = Date.now()): Promise<void> {
  await db
    .updateTable("users")
    .set({ name: NameInput.parse(name), updated_at: now })
    .where("id", "=", userId)
    .execute();
  forgetRemembered(); // lib/server/session-cache.ts: the session check reads this again
}

/** Disables (or re-enables) an account; a disabled user's sessions stop validating at once. */
export async function setUserDisabled(db: Db, userId: string, disabled: boolean, now = Date.now()): Promise<void> {
  await db
    .updateTable("users")
    .set({ disabled_at: disabled ? now : null, updated_at: now })
    .where("id", "=", userId)
    .execute();
  forgetRemembered(); // lib/server/session-cache.ts: the session check reads this again
}

export async function countUsers(db: Db): Promise<number> {
  const row = await db
    .selectFrom("users")
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function deleteUser(db: Db, userId: string): Promise<boolean> {
  const res = await db.deleteFrom("users").where("id", "=", userId).executeTakeFirst();
  forgetRemembered(); // lib/server/session-cache.ts: the session check reads this again
  return res.numDeletedRows > 0n;
}
