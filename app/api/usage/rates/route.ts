import { getMigratedDb } from "../../../../lib/server/db/index";
import { route } from "../../../../lib/server/route";
import { ratesView, updateUsageRates } from "../../../../lib/server/usage/rates";
import { UsageRatesBody } from "../../../../lib/server/usage/schemas";

export const runtime = "nodejs";

// GET /api/usage/rates – the team's rate card (an estimate, in whole micro-euros), with the seed's.
export const GET = route({ auth: "user", perm: "usage.read" }, async ({ team }) =>
  ratesView(await getMigratedDb(), team!.team.id),
);

// PATCH /api/usage/rates {vcpu_hour_micro?, gib_hour_micro?, storage_gb_month_micro?, free_storage_gb?}
// – billing.manage; audited with the card before and after.
export const PATCH = route(
  { auth: "user", perm: "billing.manage", body: UsageRatesBody },
  async ({ team, body, audit, user }) => {
    const db = await getMigratedDb();
    const teamId = team!.team.id;
    const { before, after } = await updateUsageRates(db, teamId, body, user!.id);
    await audit("usage.rates_update", { targetType: "team", targetId: teamId, data: { before, after } });
    return ratesView(db, teamId);
  },
);
