import { SetTimeoutBody } from "../../../../../../lib/orkestr/schemas/sandboxes";
import { route } from "../../../../../../lib/server/route";
import { proxyJson } from "../../../../../../lib/server/upstream";
import { SandboxIdParams } from "../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// POST /api/v1/sandboxes/[id]/timeout – set_timeout: expires_at = now + timeout_seconds ({id, timeout_seconds, expires_at})
export const POST = route(
  { auth: "user", perm: "sandboxes.write", params: SandboxIdParams, body: SetTimeoutBody },
  async ({ team, params, body, audit }) => {
    const res = await proxyJson(team, (orkestr) => orkestr.sandboxes.setTimeout(params.id, body.timeout_seconds));
    await audit("sandbox.set_timeout", { target: params.id, data: { timeout_seconds: body.timeout_seconds } });
    return res;
  },
);
