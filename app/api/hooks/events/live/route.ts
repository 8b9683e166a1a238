import { activeMembership, getUserFromRequest } from "../../../../../lib/server/auth";
import { getMigratedDb } from "../../../../../lib/server/db/index";
import { feedResponse } from "../../../../../lib/server/hooks/feed-response";
import { currentReceiver } from "../../../../../lib/server/hooks/setup";
import { can } from "../../../../../lib/server/rbac";
import { route } from "../../../../../lib/server/route";

export const runtime = "nodejs";

// GET /api/hooks/events/live – the user's received events as they arrive (SSE: `event: ready`, then
// `event: received` per event). 204 when the active connection has no receiver: an EventSource does
// not reconnect after a 204, so tabs of users who never clicked "Receive in Baton" cost one request.
// 429 rate_limited past the streams one session may hold open (FEED_LIMITS).
export const GET = route({ auth: "user", perm: "webhooks.read" }, async ({ req, user, current }) => {
  const db = await getMigratedDb();
  const receiver = await currentReceiver(db, user.id);
  if (!receiver) return new Response(null, { status: 204 });
  return feedResponse(current.session.id, new Set([receiver.id]), req.signal, async () => {
    // The same checks as when the stream opened, and the receiver still this user's active one.
    const current = await getUserFromRequest(req);
    if (current?.user.id !== user.id || !can(activeMembership(current)?.role, "webhooks.read")) return false;
    return (await currentReceiver(db, user.id))?.id === receiver.id;
  });
});
