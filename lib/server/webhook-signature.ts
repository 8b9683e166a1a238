import "server-only";
import { createHmac, timingSafeEqual } from "node:crypto";

// Verifies an orkestr webhook delivery: the check Baton's built-in receiver (`/api/hooks/<id>`,
// lib/server/hooks/receive.ts) runs, tested against the engine's real signatures.
//
// The wire (orkestr API, outgoing webhook request): `POST` with `X-Orkestr-Event: <type>`,
// `X-Orkestr-Delivery: dlv_…` and `X-Orkestr-Signature: sha256=<hex HMAC-SHA256(secret, raw body)>`,
// keyed by the whole `whsec_…` string as UTF-8; the body is `{"id":"evt_…","type":…,"created_at":…,"data":…}`.
// This is not Standard Webhooks (`webhook-id`/`webhook-timestamp`/`webhook-signature: v1,<base64>`
// over `id.timestamp.body`, keyed by the base64-decoded secret), so its library cannot check it.
//
// Only the body is signed: no header is. So everything a receiver acts on comes from the body —
// the freshness check reads its `created_at`, and a receiver deduplicates on its `id` (the event),
// never on `X-Orkestr-Delivery`, which anyone replaying a captured delivery can change at will.

export const SIGNATURE_HEADER = "x-orkestr-signature";
export const EVENT_HEADER = "x-orkestr-event";
export const DELIVERY_HEADER = "x-orkestr-delivery";

/**
 * How old (or how far ahead, for clock skew) an event's `created_at` may be. The local engine's
 * whole retry schedule (4 attempts, 10 s apart, each given 10 s) ends about 70 s after the event;
 * five minutes (Standard Webhooks' tolerance) leaves room for a queue. A receiver keeps event ids
 * for at least this long, so a replay inside the window is a duplicate and one outside it is stale.
 */
export const WEBHOOK_TOLERANCE_MS = 5 * 60_000;

const SIGNATURE_SHAPE = /^sha256=([0-9a-f]{64})$/i;

/** A delivery's event, as signed. */
export interface VerifiedWebhookEvent {
  /** `evt_…`: the key to deduplicate on. */
  id: string;
  type: string;
  createdAt: Date;
  data: unknown;
}

export type WebhookRejection =
  | "missing_signature"
  | "malformed_signature"
  | "bad_signature"
  | "malformed_body"
  | "event_mismatch"
  | "stale"
  | "from_the_future";

export type WebhookVerification =
  { ok: true; event: VerifiedWebhookEvent } | { ok: false; reason: WebhookRejection; detail: string };

export interface VerifyWebhookInput {
  /** The secret (`whsec_…`); several while a rotation settles (current first, the previous after it). */
  secret: string | readonly string[];
  /** The request body exactly as received: bytes, or a string decoded as UTF-8 from them. */
  body: Uint8Array | string;
  /** `X-Orkestr-Signature`, or null when absent. */
  signature: string | null | undefined;
  /** `X-Orkestr-Event`, when sent: it must name the signed body's type. */
  eventType?: string | null;
  now?: number;
  toleranceMs?: number;
}

export type WebhookRefusal = Extract<WebhookVerification, { ok: false }>;

const rejected = (reason: WebhookRejection, detail: string): WebhookRefusal => ({ ok: false, reason, detail });

function hmac(secret: string, body: Uint8Array | string): Buffer {
  return createHmac("sha256", Buffer.from(secret, "utf8"))
    .update(typeof body === "string" ? Buffer.from(body, "utf8") : body)
    .digest();
}

/**
 * Checks what a delivery proves, whatever its age: the signature (constant time, over the raw body,
 * against each secret), then the signed event's shape and the unsigned event header's agreement
 * with it. A receiver that keeps event ids asks this first, so that a redelivery of an event it
 * already has is a duplicate even when the event is older than the tolerance (checkEventAge()).
 */
export function verifySignedEvent(input: Omit<VerifyWebhookInput, "now" | "toleranceMs">): WebhookVerification {
  const header = input.signature?.trim();
  if (!header) return rejected("missing_signature", `no ${SIGNATURE_HEADER} header`);
  const m = SIGNATURE_SHAPE.exec(header);
  if (!m) return rejected("malformed_signature", `${SIGNATURE_HEADER} is not sha256=<64 hex digits>`);
  const given = Buffer.from(m[1]!, "hex");
  const secrets = typeof input.secret === "string" ? [input.secret] : input.secret;
  // Every secret is tried (no early exit), so the time taken says nothing about which one matched.
  let matched = false;
  for (const secret of secrets) if (secret && timingSafeEqual(hmac(secret, input.body), given)) matched = true;
  if (!matched) return rejected("bad_signature", "the signature does not match the body");

  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof input.body === "string" ? input.body : Buffer.from(input.body).toString("utf8"));
  } catch {
    return rejected("malformed_body", "the signed body is not JSON");
  }
  const e = parsed as { id?: unknown; type?: unknown; created_at?: unknown; data?: unknown } | null;
  const createdAt = typeof e?.created_at === "string" ? new Date(e.created_at) : null;
  if (typeof e?.id !== "string" || !e.id || typeof e.type !== "string" || !createdAt || isNaN(createdAt.getTime()))
    return rejected("malformed_body", "the signed body lacks the event's id, type or created_at");
  if (input.eventType != null && input.eventType !== e.type)
    return rejected("event_mismatch", `${EVENT_HEADER} says ${input.eventType}, the signed body ${e.type}`);
  return { ok: true, event: { id: e.id, type: e.type, createdAt, data: e.data } };
}

/** Whether a signed event is recent enough to be new (null) or why not: too old, or dated ahead. */
export function checkEventAge(
  event: Pick<VerifiedWebhookEvent, "createdAt">,
  opts: { now?: number; toleranceMs?: number } = {},
): WebhookRefusal | null {
  const now = opts.now ?? Date.now();
  const tolerance = opts.toleranceMs ?? WEBHOOK_TOLERANCE_MS;
  const age = now - event.createdAt.getTime();
  if (age > tolerance)
    return rejected("stale", `the event is ${Math.round(age / 1000)} s old (at most ${tolerance / 1000} s)`);
  if (-age > tolerance)
    return rejected("from_the_future", `the event is dated ${Math.round(-age / 1000)} s ahead of this clock`);
  return null;
}

/**
 * Checks a delivery: verifySignedEvent(), then the event's age. Returns the event or why it was
 * refused; a receiver without a store of event ids answers 401 to any refusal and records nothing.
 */
export function verifyWebhook(input: VerifyWebhookInput): WebhookVerification {
  const signed = verifySignedEvent(input);
  if (!signed.ok) return signed;
  return checkEventAge(signed.event, input) ?? signed;
}
