import { route } from "../../../../../lib/server/route";
import { proxyJson } from "../../../../../lib/server/upstream";
import { ResourceIdParams } from "../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// GET /api/v1/snapshots/[id] – one snapshot (id or name)
export const GET = route({ auth: "user", perm: "snapshots.read", params: ResourceIdParams }, async ({ team, params }) =>
  proxyJson(team, (orkestr) => orkestr.snapshots.get(params.id)),
);

// DELETE /api/v1/snapshots/[id] – 204
export const DELETE = route(
  { auth: "user", perm: "snapshots.write", params: ResourceIdParams },
  async ({ team, params, audit }) => {
    const res = await proxyJson(team, (orkestr) => orkestr.snapshots.delete(params.id));
    await audit("snapshot.delete", { target: params.id });
    return res;
  },
);
