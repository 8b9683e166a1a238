import { z } from "zod";
import { ListQuery, Num, openEnum, Timestamp } from "./common";

export { WEBHOOK_EVENT_TYPES } from "../webhook-events";

/** A webhook (GET /v1/webhooks/{id}). `secret` comes only from POST /v1/webhooks and …/rotate-secret. */
export const Webhook = z
  .object({
    id: z.string(),
    url: z.string().nullish(),
    event_types: z.array(z.string()).nullish(),
    description: z.string().nullish(),
    enabled: z.boolean().nullish(),
    secret: z.string().nullish(),
    consecutive_failures: Num.nullish(),
    disabled_reason: z.string().nullish(),
    created_at: Timestamp.nullish(),
    updated_at: Timestamp.nullish(),
  })
  .loose();
export type Webhook = z.infer<typeof Webhook>;

export const CreateWebhookBody = z.object({
  url: z.string().url(),
  /** Omit for all events (seed 003). */
  event_types: z.array(z.string().min(1)).optional(),
  description: z.string().max(500).optional(),
});
export type CreateWebhookBody = z.input<typeof CreateWebhookBody>;

export const UpdateWebhookBody = z.object({
  url: z.string().url().optional(),
  event_types: z.array(z.string().min(1)).optional(),
  description: z.string().max(500).optional(),
  enabled: z.boolean().optional(),
});
export type UpdateWebhookBody = z.input<typeof UpdateWebhookBody>;

export const WebhookSecret = z.object({ secret: z.string() }).loose();
export type WebhookSecret = z.infer<typeof WebhookSecret>;

export const WebhookTestResult = z.object({ delivery_id: z.string().nullish() }).loose();
export type WebhookTestResult = z.infer<typeof WebhookTestResult>;

/** One delivery attempt record; the single-delivery view adds request/response excerpts. */
export const WebhookDelivery = z
  .object({
    id: z.string(),
    webhook_id: z.string().nullish(),
    event_id: z.string().nullish(),
    event_type: z.string().nullish(),
    status: openEnum(["pending", "succeeded", "failed"]).nullish(),
    attempts: Num.nullish(),
    max_attempts: Num.nullish(),
    response_status: Num.nullish(),
    duration_ms: Num.nullish(),
    /** Why the last attempt failed (a connect error, a refusal by the address guard, a non-2xx). */
    error: z.string().nullish(),
    /** The delivery this one re-sent (redeliver). */
    redelivered_from: z.string().nullish(),
    created_at: Timestamp.nullish(),
    last_attempt_at: Timestamp.nullish(),
    next_attempt_at: Timestamp.nullish(),
    request_body: z.unknown().optional(),
    response_body_excerpt: z.string().nullish(),
  })
  .loose();
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

export const ListDeliveriesQuery = ListQuery.extend({ status: z.string().optional() });
export type ListDeliveriesQuery = z.input<typeof ListDeliveriesQuery>;

/** Redeliver answers 202, with or without a body. */
export const RedeliverResult = z.object({ delivery_id: z.string().nullish(), id: z.string().nullish() }).loose();
export type RedeliverResult = z.infer<typeof RedeliverResult>;
