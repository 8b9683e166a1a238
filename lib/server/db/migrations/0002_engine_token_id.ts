import "server-only";
import type { Kysely } from "kysely";

// A local-engine connection remembers the engine token it holds (its id on the engine, never the
// token), so deleting the connection, removing the member from the team or disabling the user can
// revoke that token on the engine at once.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("orkestr_connections").addColumn("engine_token_id", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("orkestr_connections").dropColumn("engine_token_id").execute();
}
