import "server-only";
import { sql, type Kysely } from "kysely";
import { isPostgres } from "../util";

// The audit log (issue 21). audit_events gains who acted (actor_email, credential), from where
// (user_agent, request_id), the outcome (result: "ok" or the refusal's code) and a typed target
// (target_type, target_id; `target` stays for older rows). Its foreign keys go: a row outlives the
// team and the user it describes. It becomes append-only in the database itself: UPDATE is always
// refused, DELETE only inside the retention transaction (lib/server/audit/retention.ts), which on
// PostgreSQL sets `baton.audit_purge` LOCAL and on SQLite holds a row in audit_purge_permit.
//
// audit_settings holds a team's retention and its SIEM stream (secret encrypted like tokens);
// audit_outbox is the stream's queue, drained by one process at a time (lib/server/audit/stream.ts).
// orkestr_connections.first_used_at marks the first successful upstream call, audited once.

const COLUMNS = [
  ["actor_email", "text"],
  ["credential", "text"],
  ["request_id", "text"],
  ["user_agent", "text"],
  ["target_type", "text"],
  ["target_id", "text"],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    await sql`alter table audit_events drop constraint if exists audit_events_team_id_fkey`.execute(db);
    await sql`alter table audit_events drop constraint if exists audit_events_user_id_fkey`.execute(db);
    for (const [name, type] of COLUMNS) await db.schema.alterTable("audit_events").addColumn(name, type).execute();
    await db.schema
      .alterTable("audit_events")
      .addColumn("result", "text", (c) => c.notNull().defaultTo("ok"))
      .execute();
  } else {
    // SQLite cannot drop a foreign key: the table is rebuilt without them.
    await sql`create table audit_events_new (
      id text primary key,
      team_id text,
      user_id text,
      actor_email text,
      credential text,
      action text not null,
      target text,
      target_type text,
      target_id text,
      result text not null default 'ok',
      data text,
      ip text,
      user_agent text,
      request_id text,
      created_at bigint not null
    )`.execute(db);
    await sql`insert into audit_events_new (id, team_id, user_id, action, target, data, ip, created_at)
      select id, team_id, user_id, action, target, data, ip, created_at from audit_events`.execute(db);
    await sql`drop table audit_events`.execute(db);
    await sql`alter table audit_events_new rename to audit_events`.execute(db);
    await db.schema.createIndex("audit_events_user_id_idx").on("audit_events").column("user_id").execute();
  }
  // Older rows: the actor's email as it is now (later rows keep it as it was when they were written).
  await sql`update audit_events set actor_email = (select email from users where users.id = audit_events.user_id)
    where user_id is not null`.execute(db);

  // One index per filter, each ending in the keyset (created_at, id) the list pages by.
  await sql`drop index if exists audit_events_team_created_idx`.execute(db);
  const idx = (name: string, columns: string[]) =>
    db.schema.createIndex(name).ifNotExists().on("audit_events").columns(columns).execute();
  await idx("audit_events_team_time_idx", ["team_id", "created_at", "id"]);
  await idx("audit_events_team_action_idx", ["team_id", "action", "created_at", "id"]);
  await idx("audit_events_team_actor_idx", ["team_id", "actor_email", "created_at", "id"]);
  await idx("audit_events_team_target_idx", ["team_id", "target_type", "target_id", "created_at", "id"]);
  await idx("audit_events_team_result_idx", ["team_id", "result", "created_at", "id"]);

  // Append-only, enforced by the database. The permit table is read by SQLite's trigger only; it
  // exists on both so that the schema is one.
  await sql`create table audit_purge_permit (id integer primary key)`.execute(db);
  if (isPostgres(db)) {
    await sql`create or replace function audit_events_append_only() returns trigger language plpgsql as $$
      begin
        if tg_op = 'DELETE' and coalesce(current_setting('baton.audit_purge', true), '') = 'on' then
          return old;
        end if;
        raise exception 'audit_events is append-only (% refused)', tg_op using errcode = 'P0001';
      end $$`.execute(db);
    await sql`create trigger audit_events_append_only before update or delete on audit_events
      for each row execute function audit_events_append_only()`.execute(db);
    await sql`create trigger audit_events_no_truncate before truncate on audit_events
      for each statement execute function audit_events_append_only()`.execute(db);
  } else {
    await sql`create trigger audit_events_no_update before update on audit_events
      begin select raise(abort, 'audit_events is append-only (UPDATE refused)'); end`.execute(db);
    await sql`create trigger audit_events_no_delete before delete on audit_events
      when not exists (select 1 from audit_purge_permit)
      begin select raise(abort, 'audit_events is append-only (DELETE refused)'); end`.execute(db);
  }

  await db.schema
    .createTable("audit_settings")
    .addColumn("team_id", "text", (c) => c.primaryKey().references("teams.id").onDelete("cascade"))
    .addColumn("retention_days", "integer", (c) => c.notNull().defaultTo(365))
    .addColumn("siem_url", "text")
    .addColumn("siem_secret_ciphertext", "text")
    .addColumn("siem_enabled", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("audit_outbox")
    .addColumn("event_id", "text", (c) => c.primaryKey())
    .addColumn("team_id", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("next_attempt_at", "bigint", (c) => c.notNull())
    .addColumn("claimed_until", "bigint")
    .addColumn("last_error", "text")
    .addColumn("gave_up_at", "bigint")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("audit_outbox_due_idx")
    .on("audit_outbox")
    .columns(["gave_up_at", "next_attempt_at"])
    .execute();

  await db.schema.alterTable("orkestr_connections").addColumn("first_used_at", "bigint").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("orkestr_connections").dropColumn("first_used_at").execute();
  await db.schema.dropTable("audit_outbox").execute();
  await db.schema.dropTable("audit_settings").execute();
  if (isPostgres(db)) {
    await sql`drop trigger if exists audit_events_append_only on audit_events`.execute(db);
    await sql`drop trigger if exists audit_events_no_truncate on audit_events`.execute(db);
    await sql`drop function if exists audit_events_append_only()`.execute(db);
  } else {
    await sql`drop trigger if exists audit_events_no_update`.execute(db);
    await sql`drop trigger if exists audit_events_no_delete`.execute(db);
  }
  await sql`drop table if exists audit_purge_permit`.execute(db);
  for (const name of ["time", "action", "actor", "target", "result"])
    await sql`drop index if exists ${sql.raw(`audit_events_team_${name}_idx`)}`.execute(db);
  for (const [name] of COLUMNS) await db.schema.alterTable("audit_events").dropColumn(name).execute();
  await db.schema.alterTable("audit_events").dropColumn("result").execute();
  await db.schema
    .createIndex("audit_events_team_created_idx")
    .on("audit_events")
    .columns(["team_id", "created_at"])
    .execute();
  // The foreign keys are not put back: rows written meanwhile may name teams and users that are gone.
}
