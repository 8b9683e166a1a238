import "server-only";
import type { Kysely } from "kysely";

// Baton's own usage record (issue 22; lib/server/usage/). The hosted orkestr API only gives
// cumulative counters per sandbox (GET /v1/sandboxes/{id}/metrics → lifetime), so Baton reads them
// and books the growth between two readings on the UTC day of the later one:
// - usage_meters: per (team, sandbox), the last reading (in whole milliseconds of CPU and of
//   GiB-seconds), the one before it (for the run-rate), and final_at once a terminal reading was
//   booked. Writes are compare-and-swap on the stored reading, so replays and two writers book once.
// - usage_daily: the booked growth per (team, sandbox, UTC day), with who made the sandbox and from
//   which template. Integers only; money is computed at read time with the team's rate card.
// - team_usage_settings: the team's rate card in micro-euros (the seed's prices by default) and
//   when the reading job last read the team's counters.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("usage_meters")
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("sandbox_id", "text", (c) => c.notNull())
    .addColumn("user_id", "text")
    .addColumn("template", "text")
    .addColumn("status", "text")
    .addColumn("cpu_ms", "bigint", (c) => c.notNull())
    .addColumn("gib_ms", "bigint", (c) => c.notNull())
    .addColumn("read_at", "bigint", (c) => c.notNull())
    .addColumn("prev_cpu_ms", "bigint")
    .addColumn("prev_gib_ms", "bigint")
    .addColumn("prev_read_at", "bigint")
    .addColumn("final_at", "bigint")
    .addPrimaryKeyConstraint("usage_meters_pkey", ["team_id", "sandbox_id"])
    .execute();
  await db.schema.createIndex("usage_meters_open_idx").on("usage_meters").columns(["team_id", "final_at"]).execute();

  await db.schema
    .createTable("usage_daily")
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("date", "text", (c) => c.notNull())
    .addColumn("sandbox_id", "text", (c) => c.notNull())
    .addColumn("user_id", "text")
    .addColumn("template", "text")
    .addColumn("cpu_ms", "bigint", (c) => c.notNull())
    .addColumn("gib_ms", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("usage_daily_pkey", ["team_id", "date", "sandbox_id"])
    .execute();

  await db.schema
    .createTable("team_usage_settings")
    .addColumn("team_id", "text", (c) => c.primaryKey().references("teams.id").onDelete("cascade"))
    .addColumn("vcpu_hour_micro", "bigint", (c) => c.notNull().defaultTo(45_000))
    .addColumn("gib_hour_micro", "bigint", (c) => c.notNull().defaultTo(15_000))
    .addColumn("storage_gb_month_micro", "bigint", (c) => c.notNull().defaultTo(100_000))
    .addColumn("free_storage_gb", "bigint", (c) => c.notNull().defaultTo(10))
    .addColumn("updated_at", "bigint")
    .addColumn("updated_by", "text")
    .addColumn("last_reading_at", "bigint")
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("team_usage_settings").execute();
  await db.schema.dropTable("usage_daily").execute();
  await db.schema.dropTable("usage_meters").execute();
}
