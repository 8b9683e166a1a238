import { getMigratedDb } from "../../../lib/server/db/index";
import { auditEventView, queryAuditEvents } from "../../../lib/server/audit/query";
import { AuditListQuery, filterOf } from "../../../lib/server/audit/schemas";
import { route } from "../../../lib/server/route";

export const runtime = "nodejs";

// GET /api/audit?actor=&action=&target_type=&target_id=&result=&date_from=&date_to=&q=&cursor=&limit=
// – the acting team's audit log, newest first, `{items, next_cursor}` (keyset paging: deep pages cost
// what the first one does). `q` is the query box in Coder's syntax (lib/audit-query.ts).
export const GET = route({ auth: "user", perm: "audit.read", query: AuditListQuery }, async ({ team, query }) => {
  const db = await getMigratedDb();
  const page = await queryAuditEvents(db, {
    teamId: team!.team.id,
    filter: filterOf(query),
    cursor: query.cursor ?? null,
    limit: query.limit,
  });
  return { items: page.items.map(auditEventView), next_cursor: page.nextCursor };
});
