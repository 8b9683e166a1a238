import { CreateWebhookBody } from "../../../../lib/orkestr/schemas/webhooks";
import { json, route } from "../../../../lib/server/route";
import { idempotencyFrom, proxyPage, withUpstream } from "../../../../lib/server/upstream";
import { ProxyListQuery } from "../../../../lib/validations/proxy";

export const runtime = "nodejs";

// GET /api/v1/webhooks – one page of webhooks (no secrets)
export const GET = route({ auth: "user", perm: "webhooks.read", query: ProxyListQuery }, async ({ team, query }) =>
  proxyPage(team, (orkestr) => orkestr.webhooks.list(query)),
);

// POST /api/v1/webhooks – register one ({url, event_types?, description?}); the answer carries the
// signing secret, shown only here: no-store, and never in the audit log (201)
export const POST = route(
  { auth: "user", perm: "webhooks.write", body: CreateWebhookBody },
  async ({ req, team, body, audit }) => {
    const webhook = await withUpstream(team, (orkestr) => orkestr.webhooks.create(body, idempotencyFrom(req)));
    await audit("webhook.create", {
      target: webhook.id,
      data: { url: body.url, event_types: body.event_types ?? null },
    });
    return json(webhook, { status: 201 });
  },
);
