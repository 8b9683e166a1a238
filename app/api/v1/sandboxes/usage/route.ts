import { UsageQuery } from "../../../../../lib/orkestr/schemas/usage";
import { route } from "../../../../../lib/server/route";
import { proxyJson } from "../../../../../lib/server/upstream";

export const runtime = "nodejs";

// A static segment beside sandboxes/[id]: Next matches it before the dynamic one.

// GET /api/v1/sandboxes/usage?from=&to=&granularity=&sandbox_id= – metered CPU and memory, cost, trial credit
export const GET = route({ auth: "user", perm: "usage.read", query: UsageQuery }, async ({ team, query }) =>
  proxyJson(team, (orkestr) => orkestr.sandboxes.usage(query)),
);
