import { route } from "../../../../../../lib/server/route";
import { proxyJson } from "../../../../../../lib/server/upstream";
import { ResourceIdParams } from "../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// POST /api/v1/webhooks/[id]/test – send a webhook.test event (202 {delivery_id})
export const POST = route(
  { auth: "user", perm: "webhooks.write", params: ResourceIdParams },
  async ({ team, params, audit }) => {
    const res = await proxyJson(team, (orkestr) => orkestr.webhooks.test(params.id), { status: 202 });
    await audit("webhook.test", { target: params.id });
    return res;
  },
);
