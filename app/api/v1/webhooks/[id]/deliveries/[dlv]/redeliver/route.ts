import { route } from "../../../../../../../../lib/server/route";
import { proxyJson } from "../../../../../../../../lib/server/upstream";
import { DeliveryParams } from "../../../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// POST /api/v1/webhooks/[id]/deliveries/[dlv]/redeliver – send that event again (202)
export const POST = route(
  { auth: "user", perm: "webhooks.write", params: DeliveryParams },
  async ({ team, params, audit }) => {
    const res = await proxyJson(team, (orkestr) => orkestr.webhooks.redeliver(params.id, params.dlv), { status: 202 });
    await audit("webhook.redeliver", { target: params.id, data: { delivery_id: params.dlv } });
    return res;
  },
);
