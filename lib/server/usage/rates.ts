import "server-only";
import { SEED_RATES, type UsageRates } from "../../usage/report";
import type { ComputeRates } from "../../pricing";
import type { ActingTeam } from "../acting-team";
import type { Db } from "../db/index";
import { actingCan } from "../rbac";

// A team's rate card (issue 22): an estimate in whole micro-euros, the seed's prices until an owner
// changes it (PATCH /api/usage/rates, billing.manage). One row per team in team_usage_settings,
// shared with the reading job's last run time.

export async function getUsageRates(db: Db, teamId: string): Promise<UsageRates> {
  const row = await db
    .selectFrom("team_usage_settings")
    .select(["vcpu_hour_micro", "gib_hour_micro", "storage_gb_month_micro", "free_storage_gb"])
    .where("team_id", "=", teamId)
    .executeTakeFirst();
  if (!row) return { ...SEED_RATES };
  return {
    vcpu_hour_micro: Number(row.vcpu_hour_micro),
    gib_hour_micro: Number(row.gib_hour_micro),
    storage_gb_month_micro: Number(row.storage_gb_month_micro),
    free_storage_gb: Number(row.free_storage_gb),
  };
}

/**
 * The CPU and memory rates a page prices a sandbox's "Cost so far" with (the list, the detail
 * layout): the team's card, as /usage and GET /api/usage use it. Null when the acting role may not
 * read usage (usage.read, what GET /api/usage/rates requires): the page then shows no cost.
 */
export async function sandboxCostRates(db: Db, team: ActingTeam): Promise<ComputeRates | null> {
  if (!actingCan(team, "usage.read")) return null;
  const { vcpu_hour_micro, gib_hour_micro } = await getUsageRates(db, team.team.id);
  return { vcpu_hour_micro, gib_hour_micro };
}

export interface RatesView extends UsageRates {
  /** The seed's prices, to show beside the team's. */
  seed: UsageRates;
  updated_at: string | null;
  updated_by: string | null;
}

export async function ratesView(db: Db, teamId: string): Promise<RatesView> {
  const rates = await getUsageRates(db, teamId);
  const row = await db
    .selectFrom("team_usage_settings")
    .select(["updated_at", "updated_by"])
    .where("team_id", "=", teamId)
    .executeTakeFirst();
  return {
    ...rates,
    seed: { ...SEED_RATES },
    updated_at: row?.updated_at ? new Date(Number(row.updated_at)).toISOString() : null,
    updated_by: row?.updated_by ?? null,
  };
}

/** Changes some rates; answers the card before and after. */
export async function updateUsageRates(
  db: Db,
  teamId: string,
  patch: Partial<UsageRates>,
  by: string,
  now = Date.now(),
): Promise<{ before: UsageRates; after: UsageRates }> {
  const before = await getUsageRates(db, teamId);
  const after: UsageRates = { ...before, ...patch };
  await db
    .insertInto("team_usage_settings")
    .values({ team_id: teamId, ...after, updated_at: now, updated_by: by, last_reading_at: null })
    .onConflict((oc) => oc.column("team_id").doUpdateSet({ ...after, updated_at: now, updated_by: by }))
    .execute();
  return { before, after };
}
