import { ResumeSandboxBody } from "../../../../../../lib/orkestr/schemas/sandboxes";
import { route } from "../../../../../../lib/server/route";
import { proxyJson } from "../../../../../../lib/server/upstream";
import { SandboxIdParams } from "../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// POST /api/v1/sandboxes/[id]/resume – body optional ({timeout_seconds}); 503 fleet_full comes back with Retry-After
export const POST = route(
  { auth: "user", perm: "sandboxes.write", params: SandboxIdParams, body: ResumeSandboxBody, optionalBody: true },
  async ({ team, params, body, audit }) => {
    const res = await proxyJson(team, (orkestr) => orkestr.sandboxes.resume(params.id, body));
    await audit("sandbox.resume", { target: params.id });
    return res;
  },
);
