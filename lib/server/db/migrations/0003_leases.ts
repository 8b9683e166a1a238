import "server-only";
import { sql, type Kysely } from "kysely";

// Leases: a named job that several Baton processes on one database could all run (housekeeping
// today) is run by whichever process holds its lease. One row per job: who holds it and until when
// (epoch ms). Taken and renewed with one conditional upsert (lib/server/db/leases.ts).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("leases")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("holder", "text", (c) => c.notNull())
    .addColumn("acquired_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .execute();
  // Housekeeping claimed its period in this setting before it had a lease: nothing reads it now.
  await sql`delete from settings where key = ${"housekeeping.last_run"}`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("leases").execute();
}
