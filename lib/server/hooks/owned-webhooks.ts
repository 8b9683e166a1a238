import "server-only";
import type { OrkestrClient } from "../../orkestr/core";
import { getMigratedDb } from "../db/index";
import { UserFacingError } from "../user-error";
import { isReceiverWebhook } from "./store";

// A webhook Baton made for "Receive in Baton" belongs to Baton: it holds the secret and the URL is
// its own endpoint. Rotated, edited or deleted through the webhooks API (`/api/v1/webhooks/<id>`),
// it would silently stop delivering, and any teammate on the same orkestr account can reach it
// there. So those routes refuse, for everyone: the receiver is managed through its own routes
// (app/api/hooks/receivers: Stop receiving), which call the orkestr API directly, not these.
// Enabling, disabling, a test event and a redelivery stay: they break nothing.

export type ReceiverWebhookChange = "rotate" | "edit" | "delete";

const WHAT: Record<ReceiverWebhookChange, string> = {
  rotate: "Rotating its secret",
  edit: "Changing its URL, events or description",
  delete: "Deleting it",
};

export class ReceiverWebhookError extends UserFacingError<"webhook_owned_by_baton"> {
  override name = "ReceiverWebhookError";
  readonly status = 409;
}

/**
 * Throws 409 webhook_owned_by_baton when `webhookId` is one of Baton's receivers. Only to an account
 * that can see the webhook: for any other, the upstream's own 404 is thrown, as for an id that
 * does not exist (nothing says another account's webhook is Baton's).
 */
export async function refuseReceiverWebhook(
  orkestr: OrkestrClient,
  webhookId: string,
  change: ReceiverWebhookChange,
): Promise<void> {
  if (!(await isReceiverWebhook(await getMigratedDb(), webhookId))) return;
  await orkestr.webhooks.get(webhookId);
  throw new ReceiverWebhookError(
    "webhook_owned_by_baton",
    `This webhook is Baton's own receiver (Receive in Baton): Baton keeps its secret and it delivers to Baton's address. ${WHAT[change]} here would break it. Use the receiver's own controls in Baton instead: Stop receiving on the Events page of whoever set it up.`,
  );
}

/** Whether a PATCH changes more than `enabled` (which pauses a receiver without breaking it). */
export function patchChangesReceiver(body: Record<string, unknown>): boolean {
  return Object.entries(body).some(([key, value]) => key !== "enabled" && value !== undefined);
}
