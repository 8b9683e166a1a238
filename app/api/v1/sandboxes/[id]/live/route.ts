import { credentialKey } from "../../../../../../lib/server/auth";
import { liveResponse } from "../../../../../../lib/server/live/live-response";
import { route } from "../../../../../../lib/server/route";
import { LiveQuery } from "../../../../../../lib/validations/live";
import { SandboxIdParams } from "../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// GET /api/v1/sandboxes/[id]/live – a sandbox page's one SSE stream: `event: sandbox` (the sandbox
// when it changes), `event: metrics` (each metrics read), and the activity timeline as unnamed
// events with ids, resumed after ?cursor= or Last-Event-ID. All tabs of one connection watching
// the sandbox share one upstream reader (lib/server/live/sandbox-hub.ts). The stream ends when the
// session, the team membership, the role or the connection behind it is gone (route()'s recheck).
export const GET = route(
  { auth: "user", perm: "sandboxes.read", params: SandboxIdParams, query: LiveQuery },
  async ({ req, team, current, recheck, params, query }) =>
    liveResponse(
      team,
      // Open streams are counted per credential: the session, or the API token.
      credentialKey(current!),
      params.id,
      query.cursor ?? req.headers.get("last-event-id") ?? undefined,
      req.signal,
      recheck,
    ),
);
