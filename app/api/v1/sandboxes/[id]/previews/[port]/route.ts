import { route } from "../../../../../../../lib/server/route";
import { proxyJson } from "../../../../../../../lib/server/upstream";
import { PreviewParams } from "../../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// GET /api/v1/sandboxes/[id]/previews/[port] – host and URL of a port served in the sandbox ({port, host, url, auth_required})
export const GET = route({ auth: "user", perm: "sandboxes.read", params: PreviewParams }, async ({ team, params }) =>
  proxyJson(team, (orkestr) => orkestr.previews.get(params.id, params.port)),
);
