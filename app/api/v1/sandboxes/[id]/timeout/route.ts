import { SetTimeoutBody } from "../../../../../../lib/orkestr/schemas/sandboxes";
import { getMigratedDb } from "../../../../../../lib/server/db/index";
import { route } from "../../../../../../lib/server/route";
import { assertUnderCaps } from "../../../../../../lib/server/usage/cap-check";
import { proxyJson } from "../../../../../../lib/server/upstream";
import { SandboxIdParams } from "../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// POST /api/v1/sandboxes/[id]/timeout – set_timeout: expires_at = now + timeout_seconds ({id, timeout_seconds, expires_at});
// keep-alive prolongs spending, so a reached spend cap refuses it (402 spend_cap_reached)
export const POST = route(
  { auth: "user", perm: "sandboxes.write", params: SandboxIdParams, body: SetTimeoutBody },
  async ({ team, params, body, audit }) => {
    await assertUnderCaps(await getMigratedDb(), team!, "extend a sandbox's time");
    const res = await proxyJson(team, (orkestr) => orkestr.sandboxes.setTimeout(params.id, body.timeout_seconds));
    await audit("sandbox.set_timeout", { target: params.id, data: { timeout_seconds: body.timeout_seconds } });
    return res;
  },
);
