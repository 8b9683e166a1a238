import { route } from "../../../../lib/server/route";
import { proxyPage } from "../../../../lib/server/upstream";
import { ProxyListSnapshotsQuery } from "../../../../lib/validations/proxy";

export const runtime = "nodejs";

// GET /api/v1/snapshots?sandbox_id=&limit=&cursor= – one page of named snapshots (bare array, X-Next-Cursor)
export const GET = route(
  { auth: "user", perm: "snapshots.read", query: ProxyListSnapshotsQuery },
  async ({ team, query }) => proxyPage(team, (orkestr) => orkestr.snapshots.list(query)),
);
