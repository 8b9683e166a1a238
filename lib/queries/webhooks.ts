import { infiniteQueryOptions, queryOptions } from "@tanstack/react-query";
import { apiAll, apiJson, apiPage, apiVoid } from "../api/core";
import { object } from "../api/read";
import { path } from "../orkestr/path";
// Types only: zod stays out of the browser bundle (lib/api/core.ts says why).
import type { CreateWebhookBody, UpdateWebhookBody, Webhook, WebhookDelivery } from "../orkestr/schemas/webhooks";

/**
 * The webhooks page's reads and writes (through Baton's /api/v1/webhooks proxy).
 *
 * A signing secret (create, rotate-secret) is the one answer here that must not outlive the dialog
 * showing it: the writes that return one are plain functions, not mutations (a mutation's result
 * stays in TanStack's MutationCache), and anything put into the query cache goes through
 * `withoutSecret` first.
 */

export const webhookKeys = {
  all: ["webhooks"] as const,
  list: () => ["webhooks", "list"] as const,
  detail: (id: string) => ["webhooks", "detail", id] as const,
  /** Every filter of a webhook's log (invalidate this after a write). */
  deliveries: (id: string) => ["webhooks", "deliveries", id] as const,
  deliveryPage: (id: string, status: DeliveryFilter) => ["webhooks", "deliveries", id, "log", status] as const,
  lastDelivery: (id: string) => ["webhooks", "deliveries", id, "last"] as const,
  delivery: (id: string, dlv: string) => ["webhooks", "delivery", id, dlv] as const,
  /** Every opened delivery of a webhook (its request and response). */
  deliveryOf: (id: string) => ["webhooks", "delivery", id] as const,
};

/** The delivery log's filter: every delivery, or those with one status (the API's `status`). */
export type DeliveryFilter = "all" | "pending" | "succeeded" | "failed";

/** A webhook as the create and rotate answers carry it: with its secret. */
export type WebhookWithSecret = Webhook & { secret: string };

/** Deliveries per page of the detail view. */
export const DELIVERIES_PAGE = 20;
/** How often a visible list or delivery log is read again (TanStack pauses it in a hidden tab). */
export const WEBHOOKS_REFRESH_MS = 15_000;
/** Faster while a delivery is still pending: its next attempt is seconds away. */
export const PENDING_REFRESH_MS = 3_000;

const readWebhook = object<Webhook>({ id: "string" }, { url: "string", enabled: "boolean", event_types: "array" });
const readWithSecret = object<WebhookWithSecret>({ id: "string", secret: "string" });
const readDelivery = object<WebhookDelivery>({ id: "string" }, { status: "string", attempts: "number" });
const readQueued = object<{ delivery_id: string }>({ delivery_id: "string" });

/** The webhook without its secret: what may be cached or rendered after the secret dialog closes. */
export function withoutSecret<T extends { secret?: unknown }>(webhook: T): Omit<T, "secret"> {
  const { secret: _secret, ...rest } = webhook;
  return rest;
}

export const webhookQueries = {
  /** Every webhook of the account (a handful; a few pages at most). */
  list: () =>
    queryOptions({
      queryKey: webhookKeys.list(),
      queryFn: ({ signal }) => apiAll({ path: "/api/v1/webhooks", signal }, readWebhook),
      refetchInterval: WEBHOOKS_REFRESH_MS,
    }),
  detail: (id: string) =>
    queryOptions({
      queryKey: webhookKeys.detail(id),
      queryFn: ({ signal }) => apiJson({ path: path`/api/v1/webhooks/${id}`, signal }, readWebhook),
      refetchInterval: WEBHOOKS_REFRESH_MS,
    }),
  /** The newest delivery, for the list's "last delivery" column. */
  lastDelivery: (id: string) =>
    queryOptions({
      queryKey: webhookKeys.lastDelivery(id),
      queryFn: async ({ signal }) =>
        (await apiPage({ path: path`/api/v1/webhooks/${id}/deliveries`, query: { limit: 1 }, signal }, readDelivery))
          .items[0] ?? null,
      refetchInterval: (q) => (q.state.data?.status === "pending" ? PENDING_REFRESH_MS : WEBHOOKS_REFRESH_MS),
    }),
  /** The delivery log, newest first, a page at a time (X-Next-Cursor). */
  deliveries: (id: string, status: DeliveryFilter = "all") =>
    infiniteQueryOptions({
      queryKey: webhookKeys.deliveryPage(id, status),
      queryFn: ({ signal, pageParam }) =>
        apiPage(
          {
            path: path`/api/v1/webhooks/${id}/deliveries`,
            query: { limit: DELIVERIES_PAGE, cursor: pageParam, status: status === "all" ? undefined : status },
            signal,
          },
          readDelivery,
        ),
      initialPageParam: undefined as string | undefined,
      getNextPageParam: (last) => last.nextCursor ?? undefined,
      refetchInterval: (q) =>
        q.state.data?.pages.some((p) => p.items.some((d) => d.status === "pending"))
          ? PENDING_REFRESH_MS
          : WEBHOOKS_REFRESH_MS,
    }),
  /** One delivery with its request body and response excerpt. */
  delivery: (id: string, dlv: string, pending: boolean) =>
    queryOptions({
      queryKey: webhookKeys.delivery(id, dlv),
      queryFn: ({ signal }) => apiJson({ path: path`/api/v1/webhooks/${id}/deliveries/${dlv}`, signal }, readDelivery),
      refetchInterval: pending ? PENDING_REFRESH_MS : false,
    }),
};

// ---- writes ----

/** POST /api/v1/webhooks: the answer's secret is for the caller's dialog only (see above). */
export function createWebhook(body: CreateWebhookBody, idempotencyKey: string): Promise<WebhookWithSecret> {
  return apiJson(
    { method: "POST", path: "/api/v1/webhooks", body, headers: { "idempotency-key": idempotencyKey } },
    readWithSecret,
  );
}

/** POST …/rotate-secret: the old secret stops signing at once; the new one is shown once. */
export function rotateSecret(id: string): Promise<WebhookWithSecret> {
  return apiJson({ method: "POST", path: path`/api/v1/webhooks/${id}/rotate-secret` }, readWithSecret);
}

/** PATCH: url, event_types, description (only what changes). */
export function updateWebhook(id: string, patch: UpdateWebhookBody): Promise<Webhook> {
  return apiJson({ method: "PATCH", path: path`/api/v1/webhooks/${id}`, body: patch }, readWebhook);
}

export function setEnabled(id: string, enabled: boolean): Promise<Webhook> {
  return apiJson(
    { method: "POST", path: enabled ? path`/api/v1/webhooks/${id}/enable` : path`/api/v1/webhooks/${id}/disable` },
    readWebhook,
  );
}

export function sendTest(id: string): Promise<{ delivery_id: string }> {
  return apiJson({ method: "POST", path: path`/api/v1/webhooks/${id}/test` }, readQueued);
}

export function redeliver(id: string, dlv: string): Promise<{ delivery_id: string }> {
  return apiJson({ method: "POST", path: path`/api/v1/webhooks/${id}/deliveries/${dlv}/redeliver` }, readQueued);
}

export function deleteWebhook(id: string): Promise<void> {
  return apiVoid({ method: "DELETE", path: path`/api/v1/webhooks/${id}` });
}
