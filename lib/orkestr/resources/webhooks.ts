import type { RequestOptions } from "../core";
import { paginate } from "../pagination";
import { path } from "../path";
import { APIResource } from "../resource";
import type { Page } from "../schemas/common";
import {
  RedeliverResult,
  Webhook,
  WebhookDelivery,
  WebhookSecret,
  WebhookTestResult,
  type CreateWebhookBody,
  type ListDeliveriesQuery,
  type UpdateWebhookBody,
} from "../schemas/webhooks";
import type { ListQuery } from "../schemas/common";

export class Webhooks extends APIResource {
  // POST /v1/webhooks – the answer carries `secret`, shown only here
  async create(body: CreateWebhookBody, options?: RequestOptions): Promise<Webhook> {
    return this.core.json({ method: "POST", path: "/webhooks", body, idempotencyKey: true, schema: Webhook, options });
  }

  // GET /v1/webhooks
  async list(query: ListQuery = {}, options?: RequestOptions): Promise<Page<Webhook>> {
    return this.core.list({ method: "GET", path: "/webhooks", query, item: Webhook, keys: ["webhooks"], options });
  }

  listAll(query: ListQuery = {}, options?: RequestOptions): AsyncGenerator<Webhook, void, undefined> {
    return paginate((cursor) => this.list({ ...query, cursor }, options), query.cursor);
  }

  // GET /v1/webhooks/{id}
  async get(id: string, options?: RequestOptions): Promise<Webhook> {
    return this.core.json({ method: "GET", path: path`/webhooks/${id}`, schema: Webhook, options });
  }

  // PATCH /v1/webhooks/{id} – url, event_types, enabled
  async update(id: string, body: UpdateWebhookBody, options?: RequestOptions): Promise<Webhook> {
    return this.core.json({ method: "PATCH", path: path`/webhooks/${id}`, body, schema: Webhook, options });
  }

  // DELETE /v1/webhooks/{id}
  async delete(id: string, options?: RequestOptions): Promise<void> {
    return this.core.void({ method: "DELETE", path: path`/webhooks/${id}`, options });
  }

  // POST /v1/webhooks/{id}/enable – re-arm after auto-disable (20 consecutive failures)
  async enable(id: string, options?: RequestOptions): Promise<Webhook> {
    return this.core.json({
      method: "POST",
      path: path`/webhooks/${id}/enable`,
      idempotent: true,
      schema: Webhook,
      options,
    });
  }

  // POST /v1/webhooks/{id}/disable
  async disable(id: string, options?: RequestOptions): Promise<Webhook> {
    return this.core.json({
      method: "POST",
      path: path`/webhooks/${id}/disable`,
      idempotent: true,
      schema: Webhook,
      options,
    });
  }

  // POST /v1/webhooks/{id}/rotate-secret – the new secret, shown only here
  async rotateSecret(id: string, options?: RequestOptions): Promise<WebhookSecret> {
    return this.core.json({
      method: "POST",
      path: path`/webhooks/${id}/rotate-secret`,
      schema: WebhookSecret,
      options,
    });
  }

  // POST /v1/webhooks/{id}/test – sends webhook.test (202 {delivery_id})
  async test(id: string, options?: RequestOptions): Promise<WebhookTestResult> {
    return this.core.json({
      method: "POST",
      path: path`/webhooks/${id}/test`,
      schema: WebhookTestResult,
      emptyAs: {},
      options,
    });
  }

  // GET /v1/webhooks/{id}/deliveries?status=&limit=&cursor=
  async deliveries(
    id: string,
    query: ListDeliveriesQuery = {},
    options?: RequestOptions,
  ): Promise<Page<WebhookDelivery>> {
    return this.core.list({
      method: "GET",
      path: path`/webhooks/${id}/deliveries`,
      query,
      item: WebhookDelivery,
      keys: ["deliveries"],
      options,
    });
  }

  allDeliveries(
    id: string,
    query: ListDeliveriesQuery = {},
    options?: RequestOptions,
  ): AsyncGenerator<WebhookDelivery, void, undefined> {
    return paginate((cursor) => this.deliveries(id, { ...query, cursor }, options), query.cursor);
  }

  // GET /v1/webhooks/{id}/deliveries/{dlv} – adds request_body and response_body_excerpt
  async delivery(id: string, deliveryId: string, options?: RequestOptions): Promise<WebhookDelivery> {
    return this.core.json({
      method: "GET",
      path: path`/webhooks/${id}/deliveries/${deliveryId}`,
      schema: WebhookDelivery,
      options,
    });
  }

  // POST /v1/webhooks/{id}/deliveries/{dlv}/redeliver – 202
  async redeliver(id: string, deliveryId: string, options?: RequestOptions): Promise<RedeliverResult> {
    return this.core.json({
      method: "POST",
      path: path`/webhooks/${id}/deliveries/${deliveryId}/redeliver`,
      schema: RedeliverResult,
      emptyAs: {},
      options,
    });
  }
}
