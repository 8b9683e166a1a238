import { route } from "../../../../../../lib/server/route";
import { proxyJson, proxyStream } from "../../../../../../lib/server/upstream";
import { ResourceIdParams, TemplateLogsQuery } from "../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// GET /api/v1/templates/[id]/logs?cursor=&limit= – one page of build output ({lines, next_cursor, done});
// with ?follow=true (or Accept: text/event-stream) the live SSE stream passed through unbuffered.
export const GET = route(
  { auth: "user", perm: "templates.read", params: ResourceIdParams, query: TemplateLogsQuery },
  async ({ req, team, recheck, params, query }) => {
    const follow = query.follow ?? (req.headers.get("accept") ?? "").includes("text/event-stream");
    if (!follow)
      return proxyJson(team, (orkestr) =>
        orkestr.templates.logs(params.id, { cursor: query.cursor, limit: query.limit }),
      );
    return proxyStream(
      team,
      (orkestr) => orkestr.templates.followLogsRaw(params.id, { cursor: query.cursor }, { signal: req.signal }),
      { recheck },
    );
  },
);
