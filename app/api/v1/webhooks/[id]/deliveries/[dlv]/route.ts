import { route } from "../../../../../../../lib/server/route";
import { proxyJson } from "../../../../../../../lib/server/upstream";
import { DeliveryParams } from "../../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// GET /api/v1/webhooks/[id]/deliveries/[dlv] – one delivery, with the request body and a response excerpt
export const GET = route({ auth: "user", perm: "webhooks.read", params: DeliveryParams }, async ({ team, params }) =>
  proxyJson(team, (orkestr) => orkestr.webhooks.delivery(params.id, params.dlv)),
);
