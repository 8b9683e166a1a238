import "server-only";
import type { Kysely } from "kysely";

// Personal API tokens (issue 23; lib/server/api-tokens/). One row per token a member made for one
// team: only the SHA-256 of the token (unique, how a request finds it) and a hint ("bat_…abcd"),
// its scope ("read" or "write"), when it expires (null: never, admins only), when and from where it
// was last used (written at most once a minute), and when and why it was revoked. The row goes with
// its team or user; a revoked row stays for the list and the audit trail until then.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("api_tokens")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("hint", "text", (c) => c.notNull())
    .addColumn("scope", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint")
    .addColumn("last_used_at", "bigint")
    .addColumn("last_used_ip", "text")
    .addColumn("revoked_at", "bigint")
    .addColumn("revoked_by", "text")
    .addColumn("revoked_reason", "text")
    .execute();
  await db.schema.createIndex("api_tokens_team_user_idx").on("api_tokens").columns(["team_id", "user_id"]).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("api_tokens_team_user_idx").execute();
  await db.schema.dropTable("api_tokens").execute();
}
