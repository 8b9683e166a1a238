import { ResumeSandboxBody } from "../../../../../../lib/orkestr/schemas/sandboxes";
import { getMigratedDb } from "../../../../../../lib/server/db/index";
import { route } from "../../../../../../lib/server/route";
import { assertUnderCaps } from "../../../../../../lib/server/usage/cap-check";
import { proxyJson } from "../../../../../../lib/server/upstream";
import { SandboxIdParams } from "../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// POST /api/v1/sandboxes/[id]/resume – body optional ({timeout_seconds}); 503 fleet_full comes back with Retry-After;
// 402 spend_cap_reached while a spend cap that applies to the user is reached
export const POST = route(
  { auth: "user", perm: "sandboxes.write", params: SandboxIdParams, body: ResumeSandboxBody, optionalBody: true },
  async ({ team, params, body, audit }) => {
    await assertUnderCaps(await getMigratedDb(), team!, "resume this sandbox");
    const res = await proxyJson(team, (orkestr) => orkestr.sandboxes.resume(params.id, body));
    await audit("sandbox.resume", { target: params.id });
    return res;
  },
);
