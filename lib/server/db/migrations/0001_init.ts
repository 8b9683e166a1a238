import "server-only";
import { sql, type Kysely } from "kysely";

// The first schema. Written with Kysely's schema builder only, so the same code runs on SQLite and
// Postgres: text ids, bigint epoch-ms timestamps (SQLite: integer affinity), integer 0/1 booleans,
// JSON as text, unique indexes, and foreign keys with ON DELETE CASCADE (SET NULL where a row
// should outlive its author). Migrations never import the app's types: they describe the schema
// as it was when they were written.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("users")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("email", "text", (c) => c.notNull())
    .addColumn("email_normalized", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("password_hash", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addColumn("disabled_at", "bigint")
    .execute();
  await db.schema.createIndex("users_email_normalized_key").on("users").column("email_normalized").unique().execute();

  await db.schema
    .createTable("sessions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .addColumn("last_seen_at", "bigint", (c) => c.notNull())
    .addColumn("revoked_at", "bigint")
    .addColumn("ip", "text")
    .addColumn("user_agent", "text")
    .execute();
  await db.schema.createIndex("sessions_user_id_idx").on("sessions").column("user_id").execute();
  await db.schema.createIndex("sessions_expires_at_idx").on("sessions").column("expires_at").execute();

  await db.schema
    .createTable("teams")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("slug", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("spend_cap_eur", "double precision")
    .execute();
  await db.schema.createIndex("teams_slug_key").on("teams").column("slug").unique().execute();

  await db.schema
    .createTable("memberships")
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("role", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("memberships_pkey", ["team_id", "user_id"])
    .execute();
  await db.schema.createIndex("memberships_user_id_idx").on("memberships").column("user_id").execute();

  await db.schema
    .createTable("invitations")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("email", "text", (c) => c.notNull())
    .addColumn("email_normalized", "text", (c) => c.notNull())
    .addColumn("role", "text", (c) => c.notNull())
    .addColumn("token_hash", "text", (c) => c.notNull())
    .addColumn("invited_by", "text", (c) => c.references("users.id").onDelete("set null"))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .addColumn("accepted_at", "bigint")
    .execute();
  await db.schema.createIndex("invitations_token_hash_key").on("invitations").column("token_hash").unique().execute();
  await db.schema.createIndex("invitations_team_id_idx").on("invitations").column("team_id").execute();
  await db.schema.createIndex("invitations_invited_by_idx").on("invitations").column("invited_by").execute();

  await db.schema
    .createTable("orkestr_connections")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("team_id", "text", (c) => c.references("teams.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("base_url", "text", (c) => c.notNull())
    .addColumn("token_ciphertext", "text", (c) => c.notNull())
    .addColumn("token_hint", "text", (c) => c.notNull())
    .addColumn("is_active", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addColumn("last_checked_at", "bigint")
    .addColumn("last_error", "text")
    .execute();
  await db.schema
    .createIndex("orkestr_connections_user_name_key")
    .on("orkestr_connections")
    .columns(["user_id", "name"])
    .unique()
    .execute();
  // At most one active connection per user, enforced by the database as well as by setActive().
  await db.schema
    .createIndex("orkestr_connections_one_active_key")
    .on("orkestr_connections")
    .column("user_id")
    .unique()
    .where(sql.ref("is_active"), "=", 1)
    .execute();
  await db.schema.createIndex("orkestr_connections_team_id_idx").on("orkestr_connections").column("team_id").execute();

  await db.schema
    .createTable("audit_events")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("team_id", "text", (c) => c.references("teams.id").onDelete("cascade"))
    .addColumn("user_id", "text", (c) => c.references("users.id").onDelete("set null"))
    .addColumn("action", "text", (c) => c.notNull())
    .addColumn("target", "text")
    .addColumn("data", "text")
    .addColumn("ip", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("audit_events_team_created_idx")
    .on("audit_events")
    .columns(["team_id", "created_at"])
    .execute();
  await db.schema.createIndex("audit_events_user_id_idx").on("audit_events").column("user_id").execute();

  await db.schema
    .createTable("login_attempts")
    .addColumn("key", "text", (c) => c.primaryKey())
    .addColumn("window_start", "bigint", (c) => c.notNull())
    .addColumn("count", "integer", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("settings")
    .addColumn("key", "text", (c) => c.primaryKey())
    .addColumn("value", "text", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    "settings",
    "login_attempts",
    "audit_events",
    "orkestr_connections",
    "invitations",
    "memberships",
    "teams",
    "sessions",
    "users",
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
