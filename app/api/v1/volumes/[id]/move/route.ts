import { MoveVolumeBody } from "../../../../../../lib/orkestr/schemas/volumes";
import { route } from "../../../../../../lib/server/route";
import { proxyJson } from "../../../../../../lib/server/upstream";
import { ResourceIdParams } from "../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// POST /api/v1/volumes/[id]/move – relocate a detached volume ({region}); 202 with status "moving"
export const POST = route(
  { auth: "user", perm: "volumes.write", params: ResourceIdParams, body: MoveVolumeBody },
  async ({ team, params, body, audit }) => {
    const res = await proxyJson(team, (orkestr) => orkestr.volumes.move(params.id, body.region), { status: 202 });
    await audit("volume.move", { target: params.id, data: { region: body.region } });
    return res;
  },
);
