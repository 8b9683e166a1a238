import { route } from "../../../../../../lib/server/route";
import { proxyPage } from "../../../../../../lib/server/upstream";
import { ProxyListDeliveriesQuery, ResourceIdParams } from "../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// GET /api/v1/webhooks/[id]/deliveries?status=&limit=&cursor= – one page of delivery attempts (X-Next-Cursor)
export const GET = route(
  { auth: "user", perm: "webhooks.read", params: ResourceIdParams, query: ProxyListDeliveriesQuery },
  async ({ team, params, query }) => proxyPage(team, (orkestr) => orkestr.webhooks.deliveries(params.id, query)),
);
