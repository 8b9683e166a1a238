import "server-only";
import { UserFacingError } from "../user-error";

// What the receiving endpoint refuses, each answered as `{detail, code}`. Every refusal is a 401
// (the delivery did not prove it came from the webhook's holder of the secret, or proves nothing
// new), except a body too large to be one (413), a signed body that is not an event (400) and a
// signed event under an id this receiver already has with other bytes (409). (A sender past its
// budget of refused deliveries gets 429 before any of these: lib/server/hooks/delivery-budget.ts.)

export const RECEIVER_ERROR_STATUS = {
  unknown_receiver: 401,
  bad_signature: 401,
  event_mismatch: 401,
  stale_delivery: 401,
  replayed_delivery: 401,
  conflicting_event: 409,
  missing_delivery_id: 401,
  malformed_event: 400,
  payload_too_large: 413,
} as const;

export type ReceiverErrorCode = keyof typeof RECEIVER_ERROR_STATUS;

export class ReceiverError extends UserFacingError<ReceiverErrorCode> {
  override name = "ReceiverError";
  readonly status: number;
  constructor(code: ReceiverErrorCode, detail: string) {
    super(code, detail);
    this.status = RECEIVER_ERROR_STATUS[code];
  }
}
