import { getMigratedDb } from "../../../lib/server/db/index";
import { route } from "../../../lib/server/route";
import { withUpstream } from "../../../lib/server/upstream";
import { buildUsageReport } from "../../../lib/server/usage/report";
import { UsageReportQuery } from "../../../lib/server/usage/schemas";
import { readStorage } from "../../../lib/server/usage/storage";

export const runtime = "nodejs";

// GET /api/usage?from=YYYY-MM-DD&to=YYYY-MM-DD – the acting team's usage and cost from Baton's own
// record (lib/server/usage/), as UsageReport (lib/usage/report.ts). Default: this UTC month. Owners
// and admins see everyone's ("team"); members and viewers their own ("self") and the team's total.
// Storage comes from the upstream's lists; when they cannot be read it is null and the rest stands.
export const GET = route({ auth: "user", perm: "usage.read", query: UsageReportQuery }, async ({ team, query }) => {
  const db = await getMigratedDb();
  const acting = team!;
  const storage = await withUpstream(acting, (orkestr) => readStorage(orkestr)).catch(() => null);
  return buildUsageReport(db, {
    teamId: acting.team.id,
    userId: acting.userId,
    scope: acting.role === "owner" || acting.role === "admin" ? "team" : "self",
    from: query.from,
    to: query.to,
    storage,
  });
});
