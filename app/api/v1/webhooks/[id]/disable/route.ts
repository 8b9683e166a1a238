import { route } from "../../../../../../lib/server/route";
import { proxyJson } from "../../../../../../lib/server/upstream";
import { ResourceIdParams } from "../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// POST /api/v1/webhooks/[id]/disable – stop deliveries until enabled again
export const POST = route(
  { auth: "user", perm: "webhooks.write", params: ResourceIdParams },
  async ({ team, params, audit }) => {
    const res = await proxyJson(team, (orkestr) => orkestr.webhooks.disable(params.id));
    await audit("webhook.disable", { target: params.id });
    return res;
  },
);
