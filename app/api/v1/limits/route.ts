import { route } from "../../../../lib/server/route";
import { proxyJson } from "../../../../lib/server/upstream";

export const runtime = "nodejs";

// GET /api/v1/limits – alias of /api/v1/sandboxes/limits (as upstream)
export const GET = route({ auth: "user", perm: "sandboxes.read" }, async ({ team }) =>
  proxyJson(team, (orkestr) => orkestr.sandboxes.limits()),
);
