import { route } from "../../../../../../lib/server/route";
import { proxyJson } from "../../../../../../lib/server/upstream";
import { SandboxIdParams } from "../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// POST /api/v1/sandboxes/[id]/pause – snapshot and suspend (idempotent upstream: pausing a paused sandbox is 200)
export const POST = route(
  { auth: "user", perm: "sandboxes.write", params: SandboxIdParams },
  async ({ team, params, audit }) => {
    const res = await proxyJson(team, (orkestr) => orkestr.sandboxes.pause(params.id));
    await audit("sandbox.pause", { target: params.id });
    return res;
  },
);
