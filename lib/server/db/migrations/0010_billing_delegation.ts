import "server-only";
import type { Kysely } from "kysely";

// Who sets a team's spend caps and prices (issue 22): billing.manage is the owners' (lib/server/rbac.ts),
// and an owner may extend it to the team's admins. teams.admins_manage_billing is that choice (0 or
// 1): read into the acting team, it is what actingCan() adds to an admin's role.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("teams")
    .addColumn("admins_manage_billing", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("teams").dropColumn("admins_manage_billing").execute();
}
