import { route } from "../../../../../../../lib/server/route";
import { proxyJson } from "../../../../../../../lib/server/upstream";
import { PtyParams } from "../../../../../../../lib/validations/pty";

export const runtime = "nodejs";

// GET /api/v1/sandboxes/[id]/pty/[pid] – one terminal session (the client asks after a failed reconnect)
export const GET = route({ auth: "user", perm: "sandboxes.read", params: PtyParams }, async ({ team, params }) =>
  proxyJson(team, (orkestr) => orkestr.pty.get(params.id, params.pid)),
);

// DELETE /api/v1/sandboxes/[id]/pty/[pid] – hang up and kill the session (204)
export const DELETE = route({ auth: "user", perm: "sandboxes.write", params: PtyParams }, async ({ team, params }) =>
  proxyJson(team, (orkestr) => orkestr.pty.close(params.id, params.pid)),
);
