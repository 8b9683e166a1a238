import "server-only";
import type { Db } from "../db/index";
import { DELIVERY_HEADER, EVENT_HEADER, SIGNATURE_HEADER, verifyWebhook } from "../webhook-signature";
import { ReceiverError } from "./errors";
import { receiverSecret, recordEvent, type ReceivedEvent } from "./store";

// One delivery to `/api/hooks/<id>`, start to end: the receiver by its id, the signature over the
// raw bytes in constant time (lib/server/webhook-signature.ts), the event's age, then the record,
// which the database refuses for an event id or a delivery id this receiver already has. Anything
// refused records nothing.

/** The largest delivery accepted. An event is a sandbox object and a few fields: a few KiB. */
export const MAX_DELIVERY_BYTES = 256 * 1024;

const DELIVERY_ID = /^[A-Za-z0-9_-]{1,100}$/;

export interface Delivery {
  receiverId: string;
  body: Uint8Array;
  headers: Headers;
  now?: number;
}

/** What a sandbox event's data says about its sandbox (id and status), when it carries one. */
function sandboxOf(data: unknown): { id: string | null; status: string | null } {
  const d = (data ?? {}) as { sandbox?: { id?: unknown; status?: unknown }; sandbox_id?: unknown };
  const id = typeof d.sandbox?.id === "string" ? d.sandbox.id : typeof d.sandbox_id === "string" ? d.sandbox_id : null;
  const status = typeof d.sandbox?.status === "string" ? d.sandbox.status : null;
  return { id, status };
}

/** Verifies and records a delivery; throws ReceiverError for anything it refuses. */
export async function receiveDelivery(db: Db, d: Delivery): Promise<ReceivedEvent> {
  const found = await receiverSecret(db, d.receiverId);
  // The same answer whether the id never existed or its secret is unreadable: nothing can verify it.
  if (!found) throw new ReceiverError("unknown_receiver", "No webhook receiver has this address in Baton.");
  const now = d.now ?? Date.now();
  const verdict = verifyWebhook({
    secret: found.secret,
    body: d.body,
    signature: d.headers.get(SIGNATURE_HEADER),
    eventType: d.headers.get(EVENT_HEADER),
    now,
  });
  if (!verdict.ok) {
    switch (verdict.reason) {
      case "malformed_body":
        throw new ReceiverError("malformed_event", `The delivery was refused: ${verdict.detail}.`);
      case "event_mismatch":
        throw new ReceiverError("event_mismatch", `The delivery was refused: ${verdict.detail}.`);
      case "stale":
      case "from_the_future":
        throw new ReceiverError("stale_delivery", `The delivery was refused: ${verdict.detail}.`);
      default:
        throw new ReceiverError("bad_signature", `The delivery was refused: ${verdict.detail}.`);
    }
  }
  const deliveryId = d.headers.get(DELIVERY_HEADER)?.trim() ?? "";
  if (!DELIVERY_ID.test(deliveryId))
    throw new ReceiverError("missing_delivery_id", `The delivery was refused: no valid ${DELIVERY_HEADER} header.`);
  const sandbox = sandboxOf(verdict.event.data);
  const recorded = await recordEvent(
    db,
    {
      receiverId: found.receiver.id,
      eventId: verdict.event.id,
      deliveryId,
      type: verdict.event.type,
      sandboxId: sandbox.id,
      sandboxStatus: sandbox.status,
      body: Buffer.from(d.body).toString("utf8"),
      eventCreatedAt: verdict.event.createdAt.getTime(),
    },
    now,
  );
  if (!recorded)
    throw new ReceiverError(
      "replayed_delivery",
      `The delivery was refused: event ${verdict.event.id} (or delivery ${deliveryId}) was already received.`,
    );
  return recorded;
}
