import "server-only";
import type { Kysely } from "kysely";

// Spend caps (issue 22; the rules are lib/usage/caps.ts, the job lib/server/usage/caps-job.ts).
// - spend_caps: a team's cap (subject "team") or a member's (subject = their user id) per UTC window
//   ("month" or "day"), in whole micro-euros, with what it does when reached. One per subject and
//   window. A member's row goes with the user.
// - spend_cap_state: what the job last computed for a cap in its current window: the figure, when
//   it was reached and acted on, and how. The request-time check reads it (no usage read per request).
// - spend_cap_alerts: one row per cap, window and threshold (50/80/100): inserting it is what claims
//   the alert, so it goes out once per window whichever Baton instance runs the job.
// - spend_alert_settings: where alerts go besides the console and the audit log: email to the
//   team's owners and admins (when SMTP is configured), and a signed webhook (secret encrypted with
//   AAD "spend_alert_settings:<team>:webhook_secret").

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("spend_caps")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("subject", "text", (c) => c.notNull())
    .addColumn("user_id", "text", (c) => c.references("users.id").onDelete("cascade"))
    .addColumn("window", "text", (c) => c.notNull())
    .addColumn("limit_micro", "bigint", (c) => c.notNull())
    .addColumn("action", "text", (c) => c.notNull())
    .addColumn("created_by", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_by", "text")
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("spend_caps_team_subject_window_key")
    .on("spend_caps")
    .columns(["team_id", "subject", "window"])
    .unique()
    .execute();

  await db.schema
    .createTable("spend_cap_state")
    .addColumn("cap_id", "text", (c) => c.primaryKey().references("spend_caps.id").onDelete("cascade"))
    .addColumn("window_key", "text", (c) => c.notNull())
    .addColumn("spent_micro", "bigint", (c) => c.notNull())
    .addColumn("evaluated_at", "bigint", (c) => c.notNull())
    .addColumn("reached_at", "bigint")
    .addColumn("acted_at", "bigint")
    .addColumn("last_result", "text")
    .execute();

  await db.schema
    .createTable("spend_cap_alerts")
    .addColumn("cap_id", "text", (c) => c.notNull().references("spend_caps.id").onDelete("cascade"))
    .addColumn("window_key", "text", (c) => c.notNull())
    .addColumn("threshold", "integer", (c) => c.notNull())
    .addColumn("spent_micro", "bigint", (c) => c.notNull())
    .addColumn("sent_at", "bigint", (c) => c.notNull())
    .addColumn("channels", "text")
    .addPrimaryKeyConstraint("spend_cap_alerts_pkey", ["cap_id", "window_key", "threshold"])
    .execute();

  await db.schema
    .createTable("spend_alert_settings")
    .addColumn("team_id", "text", (c) => c.primaryKey().references("teams.id").onDelete("cascade"))
    .addColumn("webhook_url", "text")
    .addColumn("webhook_secret_ciphertext", "text")
    .addColumn("email", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("updated_by", "text")
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("spend_alert_settings").execute();
  await db.schema.dropTable("spend_cap_alerts").execute();
  await db.schema.dropTable("spend_cap_state").execute();
  await db.schema.dropIndex("spend_caps_team_subject_window_key").execute();
  await db.schema.dropTable("spend_caps").execute();
}
