/** The webhooks and webhook_deliveries tables, as the service and the dispatcher read them. */

export interface WebhookRow {
  id: string;
  account_id: string;
  url: string;
  event_types: string;
  description: string | null;
  secret: string;
  enabled: number;
  consecutive_failures: number;
  disabled_reason: string | null;
  created_at: number;
  updated_at: number;
}

export type DeliveryStatus = "pending" | "succeeded" | "failed";

export interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  body: string;
  status: DeliveryStatus;
  attempts: number;
  response_status: number | null;
  response_body_excerpt: string | null;
  error: string | null;
  duration_ms: number | null;
  redelivered_from: string | null;
  created_at: number;
  last_attempt_at: number | null;
  next_attempt_at: number | null;
}
