import { route } from "../../../../../../lib/server/route";
import { proxyJson } from "../../../../../../lib/server/upstream";
import { MetricsQuery, SandboxIdParams } from "../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// GET /api/v1/sandboxes/[id]/metrics?since= – live CPU and memory, samples newer than `since`, lifetime totals
export const GET = route(
  { auth: "user", perm: "sandboxes.read", params: SandboxIdParams, query: MetricsQuery },
  async ({ team, params, query }) => proxyJson(team, (orkestr) => orkestr.sandboxes.metrics(params.id, query.since)),
);
