import { route } from "../../../../../../lib/server/route";
import { proxyJson } from "../../../../../../lib/server/upstream";
import { SandboxIdParams } from "../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// POST /api/v1/sandboxes/[id]/preview-token – a new preview_auth_token (the old one stops working).
// The token is a secret the user asked for: it goes back once, Cache-Control: no-store (route()'s
// default), and is neither stored nor audited.
export const POST = route(
  { auth: "user", perm: "sandboxes.write", params: SandboxIdParams },
  async ({ team, params, audit }) => {
    const res = await proxyJson(team, (orkestr) => orkestr.previews.rotateToken(params.id));
    await audit("sandbox.preview_token_rotate", { target: params.id });
    return res;
  },
);
