import { route } from "../../../../lib/server/route";
import { proxyJson } from "../../../../lib/server/upstream";

export const runtime = "nodejs";

// GET /api/v1/base-images – the images a template can start from
export const GET = route({ auth: "user", perm: "templates.read" }, async ({ team }) =>
  proxyJson(team, (orkestr) => orkestr.baseImages.list()),
);
