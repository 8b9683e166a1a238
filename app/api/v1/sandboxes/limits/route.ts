import { route } from "../../../../../lib/server/route";
import { proxyJson } from "../../../../../lib/server/upstream";

export const runtime = "nodejs";

// GET /api/v1/sandboxes/limits – plan, sizes, regions and capabilities of the user's orkestr API
export const GET = route({ auth: "user", perm: "sandboxes.read" }, async ({ team }) =>
  proxyJson(team, (orkestr) => orkestr.sandboxes.limits()),
);
