import { getMigratedDb } from "../../../../lib/server/db/index";
import { withinDeliveryBudget } from "../../../../lib/server/hooks/delivery-budget";
import { feed } from "../../../../lib/server/hooks/feed-response";
import { readBodyBytes } from "../../../../lib/server/hooks/raw-body";
import { MAX_DELIVERY_BYTES, receiveDelivery } from "../../../../lib/server/hooks/receive";
import { HookParams } from "../../../../lib/server/hooks/schemas";
import { json, route } from "../../../../lib/server/route";

export const runtime = "nodejs";

// POST /api/hooks/[id] – Baton's built-in webhook receiver. No session: the orkestr API (the local
// engine, server to server) calls it, and the signature over the raw body is the authentication
// (lib/server/hooks/receive.ts). route() still refuses Host names Baton does not serve and
// cross-site browser posts; the engine sends neither an Origin nor Sec-Fetch-Site. proxy.ts does
// not see this path (it would read the whole body first), so nothing reads the body before the
// receiver is known.
// Answers: 200 {status: "received"} for a new event, 200 {status: "duplicate"} for an event already
// received with the same bytes (a redelivery: nothing recorded twice). Refusals: 429 once the
// client address has spent its budget of refused deliveries (lib/server/hooks/delivery-budget.ts),
// 401 (unknown receiver, bad signature, stale, replayed), 409 (a known event id with other bytes),
// 413 (too large), 400 (a signed body that is no event), each `{detail, code}`, with nothing recorded.
export const POST = route({ auth: "public", params: HookParams }, async ({ req, params, ip }) => {
  const db = await getMigratedDb();
  const outcome = await withinDeliveryBudget(db, ip, () =>
    receiveDelivery(db, {
      receiverId: params.id,
      readBody: () => readBodyBytes(req, MAX_DELIVERY_BYTES),
      headers: req.headers,
    }),
  );
  // Tabs on this instance hear a new event at once; other instances' readers find it at their next poll.
  if (outcome.status === "received") feed().nudge();
  return json({ status: outcome.status, received: outcome.event.id, event_id: outcome.event.eventId });
});
