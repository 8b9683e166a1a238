import "server-only";
import type { Receiver, ReceivedEvent } from "./store";

// What the browser gets of receivers and received events (never a secret).

export interface ReceiverView {
  id: string;
  webhook_id: string;
  url: string;
  created_at: string;
}

export interface ReceivedEventView {
  id: string;
  event_id: string;
  delivery_id: string;
  type: string;
  sandbox_id: string | null;
  sandbox_status: string | null;
  /** The event's `data`, as signed (for sandbox events: the sandbox object when it happened). */
  data: unknown;
  created_at: string;
  received_at: string;
  /** Always true: only deliveries whose signature matched are recorded. */
  verified: true;
}

export const receiverView = (r: Receiver): ReceiverView => ({
  id: r.id,
  webhook_id: r.webhookId,
  url: r.url,
  created_at: r.createdAt.toISOString(),
});

export function eventView(e: ReceivedEvent): ReceivedEventView {
  let data: unknown = null;
  try {
    data = (JSON.parse(e.body) as { data?: unknown }).data ?? null;
  } catch {
    // recorded bodies were parsed before they were stored; an unreadable one shows no data
  }
  return {
    id: e.id,
    event_id: e.eventId,
    delivery_id: e.deliveryId,
    type: e.type,
    sandbox_id: e.sandboxId,
    sandbox_status: e.sandboxStatus,
    data,
    created_at: e.eventCreatedAt.toISOString(),
    received_at: e.receivedAt.toISOString(),
    verified: true,
  };
}
