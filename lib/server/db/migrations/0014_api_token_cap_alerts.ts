import "server-only";
import type { Kysely } from "kysely";

// The 50/80/100 % alerts of API tokens' own monthly caps (issue 23; lib/server/api-tokens/caps-job.ts).
// The same shape and claim as spend_cap_alerts (one row per subject, window and threshold; inserting
// it is what claims the alert, whichever Baton instance runs the job; lib/server/usage/caps-store.ts
// reads and writes both), but keyed by the token: spend_cap_alerts.cap_id references spend_caps, and
// a token's alerts go with the token (a revoked token's rows stay until it is deleted).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("api_token_cap_alerts")
    .addColumn("cap_id", "text", (c) => c.notNull().references("api_tokens.id").onDelete("cascade"))
    .addColumn("window_key", "text", (c) => c.notNull())
    .addColumn("threshold", "integer", (c) => c.notNull())
    .addColumn("spent_micro", "bigint", (c) => c.notNull())
    .addColumn("sent_at", "bigint", (c) => c.notNull())
    .addColumn("channels", "text")
    .addPrimaryKeyConstraint("api_token_cap_alerts_pkey", ["cap_id", "window_key", "threshold"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("api_token_cap_alerts").execute();
}
