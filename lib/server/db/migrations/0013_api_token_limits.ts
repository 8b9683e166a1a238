import "server-only";
import type { Kysely } from "kysely";

// Per-token limits (issue 23; lib/server/api-tokens/limits.ts). A token may carry its own monthly
// spend cap (whole micro-euros) and a maximum of concurrent sandboxes, both set at creation and
// null when it has none. `cap_alerted_window` is the UTC month ("2026-12") for which the caps job
// last audited the token's cap as reached, so that alert is written once per month.
// api_token_sandboxes: which sandbox Baton created with which token (written on create and fork),
// so a token's spend is the usage record's cost of those sandboxes (usage_daily by sandbox_id).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("api_tokens").addColumn("spend_cap_micro", "bigint").execute();
  await db.schema.alterTable("api_tokens").addColumn("max_concurrent", "integer").execute();
  await db.schema.alterTable("api_tokens").addColumn("cap_alerted_window", "text").execute();
  await db.schema
    .createTable("api_token_sandboxes")
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("sandbox_id", "text", (c) => c.notNull())
    .addColumn("token_id", "text", (c) => c.notNull().references("api_tokens.id").onDelete("cascade"))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("api_token_sandboxes_pkey", ["team_id", "sandbox_id"])
    .execute();
  await db.schema.createIndex("api_token_sandboxes_token_idx").on("api_token_sandboxes").column("token_id").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("api_token_sandboxes_token_idx").execute();
  await db.schema.dropTable("api_token_sandboxes").execute();
  await db.schema.alterTable("api_tokens").dropColumn("cap_alerted_window").execute();
  await db.schema.alterTable("api_tokens").dropColumn("max_concurrent").execute();
  await db.schema.alterTable("api_tokens").dropColumn("spend_cap_micro").execute();
}
