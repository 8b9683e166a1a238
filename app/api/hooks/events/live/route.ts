import { sessionOf } from "../../../../../lib/server/auth";
import { getMigratedDb } from "../../../../../lib/server/db/index";
import { feedResponse } from "../../../../../lib/server/hooks/feed-response";
import { currentReceiver } from "../../../../../lib/server/hooks/setup";
import { route } from "../../../../../lib/server/route";

export const runtime = "nodejs";

// GET /api/hooks/events/live – the user's received events as they arrive (SSE: `event: ready`, then
// `event: received` per event). 204 when the acting team's connection has no receiver: an
// EventSource does not reconnect after a 204, so tabs of users who never clicked "Receive in Baton"
// cost one request. 429 rate_limited past the streams one session may hold open (FEED_LIMITS).
export const GET = route({ auth: "user", perm: "webhooks.read" }, async ({ req, team, current, recheck }) => {
  const db = await getMigratedDb();
  const receiver = await currentReceiver(db, team);
  if (!receiver) return new Response(null, { status: 204 });
  return feedResponse(sessionOf(current).id, new Set([receiver.id]), req.signal, async () => {
    // What route() checked (session, team, role, the same connection), and the receiver still there.
    const loss = await recheck();
    if (loss) return loss;
    return (await currentReceiver(db, team))?.id === receiver.id
      ? null
      : { code: "connection_changed", detail: "Baton stopped receiving this connection's events." };
  });
});
