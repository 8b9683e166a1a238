import { activeMembership, getUserFromRequest } from "../../../../../../lib/server/auth";
import { liveResponse } from "../../../../../../lib/server/live/live-response";
import { can } from "../../../../../../lib/server/rbac";
import { route } from "../../../../../../lib/server/route";
import { LiveQuery } from "../../../../../../lib/validations/live";
import { SandboxIdParams } from "../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// GET /api/v1/sandboxes/[id]/live – a sandbox page's one SSE stream: `event: sandbox` (the sandbox
// when it changes), `event: metrics` (each metrics read), and the activity timeline as unnamed
// events with ids, resumed after ?cursor= or Last-Event-ID. All tabs of one connection watching
// the sandbox share one upstream reader (lib/server/live/sandbox-hub.ts).
export const GET = route(
  { auth: "user", perm: "sandboxes.read", params: SandboxIdParams, query: LiveQuery },
  async ({ req, user, current, params, query }) =>
    liveResponse(
      user,
      current!.session.id,
      params.id,
      query.cursor ?? req.headers.get("last-event-id") ?? undefined,
      req.signal,
      async () => {
        // The same check route() made when the stream opened: this session, this user, the permission.
        const current = await getUserFromRequest(req);
        return current?.user.id === user.id && can(current ? activeMembership(current)?.role : null, "sandboxes.read");
      },
    ),
);
