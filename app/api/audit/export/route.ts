import { getMigratedDb } from "../../../../lib/server/db/index";
import { exportStream } from "../../../../lib/server/audit/export";
import { encodeAuditCursor } from "../../../../lib/server/audit/query";
import { AuditExportQuery, filterOf } from "../../../../lib/server/audit/schemas";
import { route } from "../../../../lib/server/route";

export const runtime = "nodejs";

// GET /api/audit/export?format=csv|jsonl&<the list's filters or q> – exactly the rows GET /api/audit
// lists for the same filter, streamed as a download. The export is itself audited.
export const GET = route(
  { auth: "user", perm: "audit.read", query: AuditExportQuery },
  async ({ team, query, audit }) => {
    const db = await getMigratedDb();
    const filter = filterOf(query);
    const teamId = team!.team.id;
    // The export holds the rows as they were when it was asked for: those below its own audit row.
    const own = await audit("audit.export", {
      targetType: "audit_log",
      targetId: teamId,
      data: { format: query.format, filter },
    });
    const stamp = new Date().toISOString().slice(0, 10);
    return new Response(exportStream(db, teamId, filter, query.format, own ? encodeAuditCursor(own) : null), {
      headers: {
        "content-type": query.format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8",
        "content-disposition": `attachment; filename="audit-${team!.team.slug}-${stamp}.${query.format}"`,
        "x-content-type-options": "nosniff",
      },
    });
  },
);
