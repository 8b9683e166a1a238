import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { accountOf } from "../auth.js";
import type { EngineContext } from "../context.js";
import { parse } from "../lib/validate.js";
import { ListQuery } from "../schemas.js";
import { receiverUrlProblem } from "../services/webhook-guard.js";
import { WEBHOOK_EVENT_TYPES } from "../services/webhooks.js";

/**
 * https:// on a public address, or an origin in ORKESTR_ENGINE_WEBHOOK_ALLOW; checked by parsing,
 * never by connecting (host names are checked again at every delivery's connect: webhook-guard.ts).
 */
const receiverUrl = (allow: readonly string[]) =>
  z
    .string()
    .min(1)
    .max(2048)
    .superRefine((url, ctx) => {
      const problem = receiverUrlProblem(url, allow);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    });

const EventTypes = z
  .array(z.enum(WEBHOOK_EVENT_TYPES))
  .min(1, "list at least one event type, or omit event_types for all events")
  .max(WEBHOOK_EVENT_TYPES.length * 2);
const Description = z.string().max(500).nullable();

const webhookBodies = (allow: readonly string[]) => ({
  CreateWebhookBody: z.object({
    url: receiverUrl(allow),
    event_types: EventTypes.optional(),
    description: Description.optional(),
    enabled: z.boolean().optional(),
  }),
  PatchWebhookBody: z.object({
    url: receiverUrl(allow).optional(),
    event_types: EventTypes.optional(),
    description: Description.optional(),
    enabled: z.boolean().optional(),
  }),
});

const WebhookParams = z.object({ id: z.string().min(1).max(64) });
const DeliveryParams = z.object({ id: z.string().min(1).max(64), dlv: z.string().min(1).max(64) });
const DeliveriesQuery = ListQuery.extend({ status: z.enum(["pending", "succeeded", "failed"]).optional() });

/** Webhooks and their delivery log (contract §3.11, with the seed's retry rules). */
export function webhookRoutes(app: FastifyInstance, ctx: EngineContext): void {
  const { webhooks } = ctx;
  const { CreateWebhookBody, PatchWebhookBody } = webhookBodies(ctx.config.webhookAllow);

  // POST /v1/webhooks – subscribe; the whsec_ secret is in this response only (Idempotency-Key honoured)
  app.post("/webhooks", async (req, reply) => {
    const body = parse(CreateWebhookBody, req.body, "body");
    return ctx.idempotency.run(req, reply, "POST /v1/webhooks", async () => {
      const { view, secret } = webhooks.create(accountOf(req), body);
      return { status: 201, body: { ...view, secret } };
    });
  });

  // GET /v1/webhooks – newest first, never with secrets; ?limit=&cursor=
  app.get("/webhooks", async (req, reply) => {
    const { items, next } = webhooks.list(accountOf(req), parse(ListQuery, req.query, "query"));
    if (next) reply.header("X-Next-Cursor", next);
    return items;
  });

  // GET /v1/webhooks/{id}
  app.get("/webhooks/:id", async (req) => webhooks.get(accountOf(req), parse(WebhookParams, req.params, "path").id));

  // PATCH /v1/webhooks/{id} – url, event_types, description, enabled (alias of enable/disable)
  app.patch("/webhooks/:id", async (req) => {
    const { id } = parse(WebhookParams, req.params, "path");
    return webhooks.update(accountOf(req), id, parse(PatchWebhookBody, req.body, "body"));
  });

  // DELETE /v1/webhooks/{id} – with its delivery log
  app.delete("/webhooks/:id", async (req, reply) => {
    webhooks.delete(accountOf(req), parse(WebhookParams, req.params, "path").id);
    return reply.status(204).send();
  });

  // POST /v1/webhooks/{id}/enable – re-arm (also after auto-disable) and reset the failure streak
  app.post("/webhooks/:id/enable", async (req) =>
    webhooks.setEnabled(accountOf(req), parse(WebhookParams, req.params, "path").id, true),
  );

  // POST /v1/webhooks/{id}/disable – stop deliveries; queued ones are cancelled
  app.post("/webhooks/:id/disable", async (req) =>
    webhooks.setEnabled(accountOf(req), parse(WebhookParams, req.params, "path").id, false),
  );

  // POST /v1/webhooks/{id}/rotate-secret – the new secret, shown once
  app.post("/webhooks/:id/rotate-secret", async (req) => {
    const { view, secret } = webhooks.rotateSecret(accountOf(req), parse(WebhookParams, req.params, "path").id);
    return { ...view, secret };
  });

  // POST /v1/webhooks/{id}/test – queue a webhook.test delivery
  app.post("/webhooks/:id/test", async (req, reply) => {
    const deliveryId = webhooks.sendTest(accountOf(req), parse(WebhookParams, req.params, "path").id);
    return reply.status(202).send({ delivery_id: deliveryId });
  });

  // GET /v1/webhooks/{id}/deliveries – newest first; ?status=pending|succeeded|failed&limit=&cursor=
  app.get("/webhooks/:id/deliveries", async (req, reply) => {
    const { id } = parse(WebhookParams, req.params, "path");
    const { items, next } = webhooks.listDeliveries(accountOf(req), id, parse(DeliveriesQuery, req.query, "query"));
    if (next) reply.header("X-Next-Cursor", next);
    return items;
  });

  // GET /v1/webhooks/{id}/deliveries/{dlv} – with request_body and a 2 KiB response_body_excerpt
  app.get("/webhooks/:id/deliveries/:dlv", async (req) => {
    const { id, dlv } = parse(DeliveryParams, req.params, "path");
    return webhooks.getDelivery(accountOf(req), id, dlv);
  });

  // POST /v1/webhooks/{id}/deliveries/{dlv}/redeliver – send the same event again as a new delivery
  app.post("/webhooks/:id/deliveries/:dlv/redeliver", async (req, reply) => {
    const { id, dlv } = parse(DeliveryParams, req.params, "path");
    return reply.status(202).send({ delivery_id: webhooks.redeliver(accountOf(req), id, dlv) });
  });
}
