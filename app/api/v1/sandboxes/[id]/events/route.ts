import { route } from "../../../../../../lib/server/route";
import { proxyPage, proxyStream } from "../../../../../../lib/server/upstream";
import { EventsQuery, SandboxIdParams } from "../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// GET /api/v1/sandboxes/[id]/events – one page of the activity timeline (oldest first, X-Next-Cursor);
// with ?follow=true (or Accept: text/event-stream, as EventSource sends) the live SSE stream passed
// through unbuffered, resuming after ?cursor= or the Last-Event-ID an EventSource reconnects with.
export const GET = route(
  { auth: "user", perm: "sandboxes.read", params: SandboxIdParams, query: EventsQuery },
  async ({ req, team, recheck, params, query }) => {
    const follow = query.follow ?? (req.headers.get("accept") ?? "").includes("text/event-stream");
    if (!follow)
      return proxyPage(team, (orkestr) =>
        orkestr.sandboxes.events(params.id, { limit: query.limit, cursor: query.cursor, type: query.type }),
      );
    const cursor = query.cursor ?? req.headers.get("last-event-id") ?? undefined;
    // The browser going away aborts the upstream call, so no follower is left subscribed upstream.
    return proxyStream(
      team,
      (orkestr) => orkestr.sandboxes.followEventsRaw(params.id, { cursor, type: query.type }, { signal: req.signal }),
      { recheck },
    );
  },
);
