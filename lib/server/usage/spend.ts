import "server-only";
import { costMicro } from "../../usage/report";
import type { Db } from "../db/index";
import { getUsageRates } from "./rates";

// What a team spent in a window of whole UTC days, from Baton's usage record: the figure the spend
// caps' job compares with the caps (its `spend` dependency, lib/server/usage/caps-job.ts on main).
// Cost per (sandbox, day) row with the team's rate card, summed as whole micro-euros, exactly as
// GET /api/usage sums it, so a cap and the usage page agree to the micro-euro.

export interface WindowSpend {
  team: number;
  /** By creator user id (sandboxes made outside Baton count for the team only). */
  byUser: ReadonlyMap<string, number>;
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Spending in [start, end) (epoch ms on UTC midnights: a day or a month). */
export async function windowSpend(
  db: Db,
  teamId: string,
  window: { start: number; end: number },
): Promise<WindowSpend> {
  const rates = await getUsageRates(db, teamId);
  const rows = await db
    .selectFrom("usage_daily")
    .select(["user_id", "cpu_ms", "gib_ms"])
    .where("team_id", "=", teamId)
    .where("date", ">=", day(window.start))
    .where("date", "<", day(window.end))
    .execute();
  let team = 0;
  const byUser = new Map<string, number>();
  for (const r of rows) {
    const cost = costMicro(Number(r.cpu_ms) / 1000, Number(r.gib_ms) / 1000, rates);
    team += cost;
    if (r.user_id) byUser.set(r.user_id, (byUser.get(r.user_id) ?? 0) + cost);
  }
  return { team, byUser };
}
