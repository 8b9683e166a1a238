import { UpdateVolumeBody } from "../../../../../lib/orkestr/schemas/volumes";
import { route } from "../../../../../lib/server/route";
import { proxyJson } from "../../../../../lib/server/upstream";
import { ResourceIdParams } from "../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// GET /api/v1/volumes/[id] – one volume (id or name)
export const GET = route({ auth: "user", perm: "volumes.read", params: ResourceIdParams }, async ({ team, params }) =>
  proxyJson(team, (orkestr) => orkestr.volumes.get(params.id)),
);

// PATCH /api/v1/volumes/[id] – rename, grow (409 cannot_shrink), change max lifetime
export const PATCH = route(
  { auth: "user", perm: "volumes.write", params: ResourceIdParams, body: UpdateVolumeBody },
  async ({ team, params, body, audit }) => {
    const res = await proxyJson(team, (orkestr) => orkestr.volumes.update(params.id, body));
    await audit("volume.update", { target: params.id, data: body });
    return res;
  },
);

// DELETE /api/v1/volumes/[id] – 204, or 409 volume_in_use while attached
export const DELETE = route(
  { auth: "user", perm: "volumes.write", params: ResourceIdParams },
  async ({ team, params, audit }) => {
    const res = await proxyJson(team, (orkestr) => orkestr.volumes.delete(params.id));
    await audit("volume.delete", { target: params.id });
    return res;
  },
);
