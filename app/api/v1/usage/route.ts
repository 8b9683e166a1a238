import { UsageQuery } from "../../../../lib/orkestr/schemas/usage";
import { route } from "../../../../lib/server/route";
import { proxyJson } from "../../../../lib/server/upstream";

export const runtime = "nodejs";

// GET /api/v1/usage – alias of /api/v1/sandboxes/usage (as upstream)
export const GET = route({ auth: "user", perm: "usage.read", query: UsageQuery }, async ({ team, query }) =>
  proxyJson(team, (orkestr) => orkestr.sandboxes.usage(query)),
);
