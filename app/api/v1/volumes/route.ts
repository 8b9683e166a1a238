import { CreateVolumeBody } from "../../../../lib/orkestr/schemas/volumes";
import { json, route } from "../../../../lib/server/route";
import { idempotencyFrom, proxyPage, withUpstream } from "../../../../lib/server/upstream";
import { ProxyListVolumesQuery } from "../../../../lib/validations/proxy";

export const runtime = "nodejs";

// GET /api/v1/volumes?region=&status= – one page of volumes (bare array, X-Next-Cursor)
export const GET = route(
  { auth: "user", perm: "volumes.read", query: ProxyListVolumesQuery },
  async ({ team, query }) => proxyPage(team, (orkestr) => orkestr.volumes.list(query)),
);

// POST /api/v1/volumes – create a volume ({name, size_gb?, region?, max_lifetime_*?}) (201)
export const POST = route(
  { auth: "user", perm: "volumes.write", body: CreateVolumeBody },
  async ({ req, team, body, audit }) => {
    const volume = await withUpstream(team, (orkestr) => orkestr.volumes.create(body, idempotencyFrom(req)));
    await audit("volume.create", {
      target: volume.id,
      data: { name: volume.name ?? body.name, size_gb: volume.size_gb ?? body.size_gb ?? null },
    });
    return json(volume, { status: 201 });
  },
);
