import { route } from "../../../../../../lib/server/route";
import { proxyJson } from "../../../../../../lib/server/upstream";
import { ResourceIdParams } from "../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// POST /api/v1/webhooks/[id]/enable – re-arm a webhook (after auto-disable at 20 consecutive failures)
export const POST = route(
  { auth: "user", perm: "webhooks.write", params: ResourceIdParams },
  async ({ team, params, audit }) => {
    const res = await proxyJson(team, (orkestr) => orkestr.webhooks.enable(params.id));
    await audit("webhook.enable", { target: params.id });
    return res;
  },
);
