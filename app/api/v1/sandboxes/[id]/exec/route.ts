import { ExecBody } from "../../../../../../lib/orkestr/schemas/exec";
import { route } from "../../../../../../lib/server/route";
import { proxyJson } from "../../../../../../lib/server/upstream";
import { SandboxIdParams } from "../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// POST /api/v1/sandboxes/[id]/exec – run a command to completion (a non-zero exit is a result); the sandbox is the upstream's to find (404 passed through)
export const POST = route(
  { auth: "user", perm: "sandboxes.write", params: SandboxIdParams, body: ExecBody },
  async ({ team, params, body }) => proxyJson(team, (orkestr) => orkestr.exec.run(params.id, body)),
);
