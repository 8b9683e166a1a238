import { getMigratedDb } from "../../../../lib/server/db/index";
import { feed } from "../../../../lib/server/hooks/feed-response";
import { readBodyBytes } from "../../../../lib/server/hooks/raw-body";
import { MAX_DELIVERY_BYTES, receiveDelivery } from "../../../../lib/server/hooks/receive";
import { HookParams } from "../../../../lib/server/hooks/schemas";
import { json, route } from "../../../../lib/server/route";

export const runtime = "nodejs";

// POST /api/hooks/[id] – Baton's built-in webhook receiver. No session: the orkestr API (the local
// engine, server to server) calls it, and the signature over the raw body is the authentication
// (lib/server/hooks/receive.ts). route() still refuses Host names Baton does not serve and
// cross-site browser posts; the engine sends neither an Origin nor Sec-Fetch-Site.
// Refusals: 401 (unknown receiver, bad signature, stale, replayed), 413 (too large), 400 (a signed
// body that is no event), each `{detail, code}`, with nothing recorded.
export const POST = route({ auth: "public", params: HookParams }, async ({ req, params }) => {
  const body = await readBodyBytes(req, MAX_DELIVERY_BYTES);
  const event = await receiveDelivery(await getMigratedDb(), { receiverId: params.id, body, headers: req.headers });
  // Tabs on this instance hear it at once; other instances' readers find it at their next poll.
  feed().nudge();
  return json({ received: event.id, event_id: event.eventId });
});
