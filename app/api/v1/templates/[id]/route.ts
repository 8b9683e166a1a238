import { route } from "../../../../../lib/server/route";
import { proxyJson } from "../../../../../lib/server/upstream";
import { ResourceIdParams } from "../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// GET /api/v1/templates/[id] – one template (a failed build carries the failing step's output)
export const GET = route({ auth: "user", perm: "templates.read", params: ResourceIdParams }, async ({ team, params }) =>
  proxyJson(team, (orkestr) => orkestr.templates.get(params.id)),
);

// DELETE /api/v1/templates/[id] – 204 (templates are immutable: there is no PATCH)
export const DELETE = route(
  { auth: "user", perm: "templates.write", params: ResourceIdParams },
  async ({ team, params, audit }) => {
    const res = await proxyJson(team, (orkestr) => orkestr.templates.delete(params.id));
    await audit("template.delete", { target: params.id });
    return res;
  },
);
