import "server-only";
import type { Kysely } from "kysely";

// Account security (issue 21, "Your account"): an optional TOTP second factor for password sign-in,
// its one-time recovery codes, and the short-lived "password was right, the code is still to come"
// records of a sign-in in two steps.
//
// - user_totp: one per user. The secret is encrypted with the vault key (AES-256-GCM) and bound to
//   the user id (AAD), so a row copied to another user does not decrypt. `confirmed_at` is null
//   while enrolment waits for a first code; `last_step` is the newest TOTP time step used, so a code
//   is accepted once (replay refused).
// - user_recovery_codes: sha256 of each code; `used_at` set when spent (once).
// - pending_logins: id = sha256(the random token in the pending cookie); `rate_key` is the sign-in
//   limiter's key of the password step, cleared only when the second factor succeeds.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("user_totp")
    .addColumn("user_id", "text", (c) => c.primaryKey().references("users.id").onDelete("cascade"))
    .addColumn("secret_ciphertext", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("confirmed_at", "bigint")
    .addColumn("last_step", "bigint")
    .execute();

  await db.schema
    .createTable("user_recovery_codes")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("code_hash", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("used_at", "bigint")
    .execute();
  await db.schema
    .createIndex("user_recovery_codes_user_hash_key")
    .on("user_recovery_codes")
    .columns(["user_id", "code_hash"])
    .unique()
    .execute();

  await db.schema
    .createTable("pending_logins")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("rate_key", "text", (c) => c.notNull())
    .addColumn("device_token", "text")
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("ip", "text")
    .addColumn("user_agent", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("pending_logins_user_id_idx").on("pending_logins").column("user_id").execute();
  await db.schema.createIndex("pending_logins_expires_at_idx").on("pending_logins").column("expires_at").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("pending_logins").execute();
  await db.schema.dropTable("user_recovery_codes").execute();
  await db.schema.dropTable("user_totp").execute();
}
