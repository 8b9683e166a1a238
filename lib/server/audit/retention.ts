import "server-only";
import { sql } from "kysely";
import { recordAudit } from "../db/audit";
import type { Db } from "../db/index";
import { isPostgres } from "../db/util";

// Retention: the one code path that deletes audit rows. The database refuses any other DELETE
// (migration 0005's triggers); this one runs in a transaction that lets the trigger through:
// `baton.audit_purge` set LOCAL on PostgreSQL, a row in audit_purge_permit on SQLite, both gone
// when the transaction ends. Run by housekeeping under its lease (once across instances); each
// team's purge is itself an `audit.purge` row with the count.

export const DEFAULT_RETENTION_DAYS = 365;
const DAY_MS = 24 * 60 * 60_000;

export interface PurgeResult {
  teamId: string | null;
  deleted: number;
}

/** Deletes rows of `teamId` (or of every team-less / settings-less group, see below) older than `before`. */
async function purgeRange(db: Db, where: { teamId: string } | { defaultGroup: true }, before: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    if (isPostgres(trx)) await sql`select set_config('baton.audit_purge', 'on', true)`.execute(trx);
    else await trx.insertInto("audit_purge_permit").values({ id: 1 }).execute();
    let q = trx.deleteFrom("audit_events").where("created_at", "<", before);
    q =
      "teamId" in where
        ? q.where("team_id", "=", where.teamId)
        : q.where((eb) =>
            eb.or([
              eb("team_id", "is", null),
              eb("team_id", "not in", eb.selectFrom("audit_settings").select("team_id")),
            ]),
          );
    const res = await q.executeTakeFirst();
    if (!isPostgres(trx)) await trx.deleteFrom("audit_purge_permit").execute();
    return Number(res.numDeletedRows);
  });
}

/**
 * Applies every team's retention at `now`: teams with settings by their own days, all other rows
 * (team-less, or of teams without settings, or of deleted teams) by the default. Returns what went.
 */
export async function applyAuditRetention(db: Db, now = Date.now()): Promise<PurgeResult[]> {
  const out: PurgeResult[] = [];
  const settings = await db.selectFrom("audit_settings").select(["team_id", "retention_days"]).execute();
  for (const s of settings) {
    const before = now - s.retention_days * DAY_MS;
    const deleted = await purgeRange(db, { teamId: s.team_id }, before);
    if (deleted > 0) out.push({ teamId: s.team_id, deleted });
  }
  const defaultBefore = now - DEFAULT_RETENTION_DAYS * DAY_MS;
  // The default group, per team so each team's log says what it lost.
  {
    const counts = await db
      .selectFrom("audit_events")
      .select(["team_id", (eb) => eb.fn.countAll<number>().as("n")])
      .where("created_at", "<", defaultBefore)
      .where((eb) =>
        eb.or([eb("team_id", "is", null), eb("team_id", "not in", eb.selectFrom("audit_settings").select("team_id"))]),
      )
      .groupBy("team_id")
      .execute();
    await purgeRange(db, { defaultGroup: true }, defaultBefore);
    for (const c of counts) out.push({ teamId: c.team_id, deleted: Number(c.n) });
  }
  for (const r of out) {
    const team = r.teamId
      ? await db.selectFrom("teams").select("id").where("id", "=", r.teamId).executeTakeFirst()
      : null;
    // A deleted team's rows go quietly: nobody can read that team's log any more.
    if (r.teamId && !team) continue;
    const days = settings.find((s) => s.team_id === r.teamId)?.retention_days ?? DEFAULT_RETENTION_DAYS;
    await recordAudit(db, {
      action: "audit.purge",
      teamId: r.teamId,
      userId: null,
      actorEmail: null,
      credential: "housekeeping",
      targetType: "audit_log",
      targetId: r.teamId,
      data: { count: r.deleted, retention_days: days, before: new Date(now - days * DAY_MS).toISOString() },
      now,
    });
  }
  return out;
}
