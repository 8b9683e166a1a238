import "server-only";
import type { Db } from "../db/index";
import {
  checkEventAge,
  DELIVERY_HEADER,
  EVENT_HEADER,
  SIGNATURE_HEADER,
  verifySignedEvent,
  type WebhookRefusal,
} from "../webhook-signature";
import { ReceiverError } from "./errors";
import { receivedEvent, receiverSecret, recordEvent, type ReceivedEvent } from "./store";

// One delivery to `/api/hooks/<id>`, start to end: the receiver by its id (before a byte of the body
// is read: an unknown id costs one indexed read), the body up to its limit, the signature over the
// raw bytes in constant time (lib/server/webhook-signature.ts), then the event id: an event this
// receiver already has is a duplicate when the body is the same bytes (a redelivery, or the
// engine's retry of a delivery whose answer it never saw) and refused otherwise; a new one must be
// recent, and is recorded. The database refuses a second record of an event id or a delivery id, so
// two instances receiving the same delivery at once record it once. Anything refused records nothing.

/** The largest delivery accepted. An event is a sandbox object and a few fields: a few KiB. */
export const MAX_DELIVERY_BYTES = 256 * 1024;

const DELIVERY_ID = /^[A-Za-z0-9_-]{1,100}$/;

export interface Delivery {
  receiverId: string;
  /** Reads the body (at most MAX_DELIVERY_BYTES): called only once the receiver is known. */
  readBody: () => Promise<Uint8Array>;
  headers: Headers;
  now?: number;
}

/** A delivery taken: recorded now, or a duplicate of the event recorded earlier (nothing new stored). */
export type DeliveryOutcome =
  { status: "received"; event: ReceivedEvent } | { status: "duplicate"; event: ReceivedEvent };

/** What the sandbox event's data says about its sandbox (id and status), when it carries one. */
function sandboxOf(data: unknown): { id: string | null; status: string | null } {
  const d = (data ?? {}) as { sandbox?: { id?: unknown; status?: unknown }; sandbox_id?: unknown };
  const id = typeof d.sandbox?.id === "string" ? d.sandbox.id : typeof d.sandbox_id === "string" ? d.sandbox_id : null;
  const status = typeof d.sandbox?.status === "string" ? d.sandbox.status : null;
  return { id, status };
}

function refusal(verdict: WebhookRefusal): ReceiverError {
  switch (verdict.reason) {
    case "malformed_body":
      return new ReceiverError("malformed_event", `The delivery was refused: ${verdict.detail}.`);
    case "event_mismatch":
      return new ReceiverError("event_mismatch", `The delivery was refused: ${verdict.detail}.`);
    case "stale":
    case "from_the_future":
      return new ReceiverError("stale_delivery", `The delivery was refused: ${verdict.detail}.`);
    default:
      return new ReceiverError("bad_signature", `The delivery was refused: ${verdict.detail}.`);
  }
}

/**
 * A signed delivery of an event the receiver already has: the same bytes are that event again (200,
 * nothing stored), other bytes under its id are refused. Only the secret's holder gets this far, so
 * telling the two apart gives a stranger nothing.
 */
function againOrConflict(earlier: ReceivedEvent, body: string): DeliveryOutcome {
  if (earlier.body === body) return { status: "duplicate", event: earlier };
  throw new ReceiverError(
    "conflicting_event",
    `The delivery was refused: event ${earlier.eventId} was already received with a different body. A redelivery repeats an event byte for byte.`,
  );
}

/** Verifies and records a delivery; throws ReceiverError for anything it refuses. */
export async function receiveDelivery(db: Db, d: Delivery): Promise<DeliveryOutcome> {
  const found = await receiverSecret(db, d.receiverId);
  // The same answer whether the id never existed or its secret is unreadable: nothing can verify it.
  if (!found) throw new ReceiverError("unknown_receiver", "No webhook receiver has this address in Baton.");
  const bytes = await d.readBody();
  const now = d.now ?? Date.now();
  const verdict = verifySignedEvent({
    secret: found.secret,
    body: bytes,
    signature: d.headers.get(SIGNATURE_HEADER),
    eventType: d.headers.get(EVENT_HEADER),
  });
  if (!verdict.ok) throw refusal(verdict);
  const deliveryId = d.headers.get(DELIVERY_HEADER)?.trim() ?? "";
  if (!DELIVERY_ID.test(deliveryId))
    throw new ReceiverError("missing_delivery_id", `The delivery was refused: no valid ${DELIVERY_HEADER} header.`);
  const event = verdict.event;
  const body = Buffer.from(bytes).toString("utf8");

  // Kept for EVENT_RETENTION_MS, far longer than the age check's window: an event found here is
  // answered as what it is at any age, so a redelivery days later does not count as a failure.
  const earlier = await receivedEvent(db, found.receiver.id, event.id);
  if (earlier) return againOrConflict(earlier, body);
  const tooOld = checkEventAge(event, { now });
  if (tooOld) throw refusal(tooOld);

  const sandbox = sandboxOf(event.data);
  const recorded = await recordEvent(
    db,
    {
      receiverId: found.receiver.id,
      eventId: event.id,
      deliveryId,
      type: event.type,
      sandboxId: sandbox.id,
      sandboxStatus: sandbox.status,
      body,
      eventCreatedAt: event.createdAt.getTime(),
    },
    now,
  );
  if (recorded) return { status: "received", event: recorded };
  // Refused by a unique index: the same event recorded a moment ago (another instance, a retry
  // racing this one), or a new event under a delivery id this receiver already has.
  const raced = await receivedEvent(db, found.receiver.id, event.id);
  if (raced) return againOrConflict(raced, body);
  throw new ReceiverError(
    "replayed_delivery",
    `The delivery was refused: delivery ${deliveryId} was already received, with another event.`,
  );
}
