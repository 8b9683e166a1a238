import { UpdateWebhookBody } from "../../../../../lib/orkestr/schemas/webhooks";
import { patchChangesReceiver, refuseReceiverWebhook } from "../../../../../lib/server/hooks/owned-webhooks";
import { route } from "../../../../../lib/server/route";
import { proxyJson } from "../../../../../lib/server/upstream";
import { ResourceIdParams } from "../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// GET /api/v1/webhooks/[id] – one webhook (no secret)
export const GET = route({ auth: "user", perm: "webhooks.read", params: ResourceIdParams }, async ({ team, params }) =>
  proxyJson(team, (orkestr) => orkestr.webhooks.get(params.id)),
);

// PATCH /api/v1/webhooks/[id] – url, event_types, description, enabled; Baton's own receiver takes
// `enabled` only (409 webhook_owned_by_baton, lib/server/hooks/owned-webhooks.ts)
export const PATCH = route(
  { auth: "user", perm: "webhooks.write", params: ResourceIdParams, body: UpdateWebhookBody },
  async ({ team, params, body, audit }) => {
    const res = await proxyJson(team, async (orkestr) => {
      if (patchChangesReceiver(body)) await refuseReceiverWebhook(orkestr, params.id, "edit");
      return orkestr.webhooks.update(params.id, body);
    });
    await audit("webhook.update", { target: params.id, data: body });
    return res;
  },
);

// DELETE /api/v1/webhooks/[id] – 204; 409 webhook_owned_by_baton for Baton's own receiver (Stop
// receiving deletes it: app/api/hooks/receivers/[id])
export const DELETE = route(
  { auth: "user", perm: "webhooks.write", params: ResourceIdParams },
  async ({ team, params, audit }) => {
    const res = await proxyJson(team, async (orkestr) => {
      await refuseReceiverWebhook(orkestr, params.id, "delete");
      return orkestr.webhooks.delete(params.id);
    });
    await audit("webhook.delete", { target: params.id });
    return res;
  },
);
