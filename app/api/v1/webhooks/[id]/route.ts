import { UpdateWebhookBody } from "../../../../../lib/orkestr/schemas/webhooks";
import { route } from "../../../../../lib/server/route";
import { proxyJson } from "../../../../../lib/server/upstream";
import { ResourceIdParams } from "../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// GET /api/v1/webhooks/[id] – one webhook (no secret)
export const GET = route({ auth: "user", perm: "webhooks.read", params: ResourceIdParams }, async ({ team, params }) =>
  proxyJson(team, (orkestr) => orkestr.webhooks.get(params.id)),
);

// PATCH /api/v1/webhooks/[id] – url, event_types, description, enabled
export const PATCH = route(
  { auth: "user", perm: "webhooks.write", params: ResourceIdParams, body: UpdateWebhookBody },
  async ({ team, params, body, audit }) => {
    const res = await proxyJson(team, (orkestr) => orkestr.webhooks.update(params.id, body));
    await audit("webhook.update", { target: params.id, data: body });
    return res;
  },
);

// DELETE /api/v1/webhooks/[id] – 204
export const DELETE = route(
  { auth: "user", perm: "webhooks.write", params: ResourceIdParams },
  async ({ team, params, audit }) => {
    const res = await proxyJson(team, (orkestr) => orkestr.webhooks.delete(params.id));
    await audit("webhook.delete", { target: params.id });
    return res;
  },
);
