import { z } from "zod";
import { accountOf } from "../auth.js";
import { Delivery, DeliveryDetail, DeliveryQueued, NoContent, Webhook, WebhookWithSecret } from "../responses.js";
import { ListQuery } from "../schemas.js";
import { receiverUrlProblem } from "../services/webhook-guard.js";
import { WEBHOOK_EVENT_TYPES } from "../services/webhooks.js";
import { sendPage, type ResourcePlugin } from "./plugin.js";

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

/** Webhooks and their delivery log (with the seed's retry rules). */
export const webhookRoutes: ResourcePlugin = async (app, { ctx }) => {
  const { webhooks } = ctx;
  const { CreateWebhookBody, PatchWebhookBody } = webhookBodies(ctx.config.webhookAllow);
  const tags = ["webhooks"];
  const byId = { params: WebhookParams };

  app.post(
    "/webhooks",
    {
      schema: {
        tags,
        summary: "Subscribe; the whsec_ secret is in this response only (Idempotency-Key honoured)",
        body: CreateWebhookBody,
        response: { 201: WebhookWithSecret },
      },
    },
    async (req, reply) =>
      ctx.idempotency.run(req, reply, "POST /v1/webhooks", async () => {
        const { view, secret } = webhooks.create(accountOf(req), req.body);
        return { status: 201, body: { ...view, secret } };
      }),
  );

  app.get(
    "/webhooks",
    {
      schema: {
        tags,
        summary: "Webhooks, newest first, never with secrets",
        querystring: ListQuery,
        response: { 200: z.array(Webhook) },
      },
    },
    async (req, reply) => sendPage(reply, webhooks.list(accountOf(req), req.query)),
  );

  app.get(
    "/webhooks/:id",
    { schema: { tags, summary: "One webhook", ...byId, response: { 200: Webhook } } },
    async (req) => webhooks.get(accountOf(req), req.params.id),
  );

  app.patch(
    "/webhooks/:id",
    {
      schema: {
        tags,
        summary: "Change url, event_types, description or enabled (as enable/disable)",
        ...byId,
        body: PatchWebhookBody,
        response: { 200: Webhook },
      },
    },
    async (req) => webhooks.update(accountOf(req), req.params.id, req.body),
  );

  app.delete(
    "/webhooks/:id",
    { schema: { tags, summary: "Delete a webhook with its delivery log", ...byId, response: { 204: NoContent } } },
    async (req, reply) => {
      webhooks.delete(accountOf(req), req.params.id);
      return reply.status(204).send();
    },
  );

  app.post(
    "/webhooks/:id/enable",
    {
      schema: {
        tags,
        summary: "Re-arm (also after auto-disable) and reset the failure streak",
        ...byId,
        response: { 200: Webhook },
      },
    },
    async (req) => webhooks.setEnabled(accountOf(req), req.params.id, true),
  );

  app.post(
    "/webhooks/:id/disable",
    { schema: { tags, summary: "Stop deliveries; queued ones are cancelled", ...byId, response: { 200: Webhook } } },
    async (req) => webhooks.setEnabled(accountOf(req), req.params.id, false),
  );

  app.post(
    "/webhooks/:id/rotate-secret",
    {
      schema: { tags, summary: "A new signing secret, shown once", ...byId, response: { 200: WebhookWithSecret } },
    },
    async (req) => {
      const { view, secret } = webhooks.rotateSecret(accountOf(req), req.params.id);
      return { ...view, secret };
    },
  );

  app.post(
    "/webhooks/:id/test",
    {
      schema: {
        tags,
        summary: "Queue a webhook.test delivery (409 webhook_disabled while the webhook is disabled)",
        ...byId,
        response: { 202: DeliveryQueued },
      },
    },
    async (req, reply) => reply.status(202).send({ delivery_id: webhooks.sendTest(accountOf(req), req.params.id) }),
  );

  app.get(
    "/webhooks/:id/deliveries",
    {
      schema: {
        tags,
        summary: "A webhook's deliveries, newest first",
        ...byId,
        querystring: DeliveriesQuery,
        response: { 200: z.array(Delivery) },
      },
    },
    async (req, reply) => sendPage(reply, webhooks.listDeliveries(accountOf(req), req.params.id, req.query)),
  );

  app.get(
    "/webhooks/:id/deliveries/:dlv",
    {
      schema: {
        tags,
        summary: "One delivery, with request_body and a 2 KiB response_body_excerpt",
        params: DeliveryParams,
        response: { 200: DeliveryDetail },
      },
    },
    async (req) => webhooks.getDelivery(accountOf(req), req.params.id, req.params.dlv),
  );

  app.post(
    "/webhooks/:id/deliveries/:dlv/redeliver",
    {
      schema: {
        tags,
        summary: "Send the same event again, as a new delivery (409 webhook_disabled while disabled)",
        params: DeliveryParams,
        response: { 202: DeliveryQueued },
      },
    },
    async (req, reply) =>
      reply.status(202).send({ delivery_id: webhooks.redeliver(accountOf(req), req.params.id, req.params.dlv) }),
  );
};
