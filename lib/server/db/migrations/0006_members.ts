import "server-only";
import type { Kysely } from "kysely";

// Members and invitations as a team admin runs them (issue 21):
// - memberships.disabled_at: a member suspended in this team (their other teams are not touched).
//   A disabled membership grants nothing: the session check and the engine-token mint skip it.
// - invitations.revoked_at: an invitation withdrawn (or replaced by a newer one to the same address);
//   its link then answers "revoked" instead of working.
// - invitations.last_sent_at: when its link was last made (resend makes a new link, the old one dies).
// - an index on (email_normalized) so a signed-in user's pending invitations are found by address.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("memberships").addColumn("disabled_at", "bigint").execute();
  await db.schema.alterTable("invitations").addColumn("revoked_at", "bigint").execute();
  await db.schema.alterTable("invitations").addColumn("last_sent_at", "bigint").execute();
  await db.schema
    .createIndex("invitations_email_normalized_idx")
    .on("invitations")
    .column("email_normalized")
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("invitations_email_normalized_idx").execute();
  await db.schema.alterTable("invitations").dropColumn("last_sent_at").execute();
  await db.schema.alterTable("invitations").dropColumn("revoked_at").execute();
  await db.schema.alterTable("memberships").dropColumn("disabled_at").execute();
}
