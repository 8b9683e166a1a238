import { z } from "zod";
import { ExecBody } from "../../../../../../lib/orkestr/schemas/exec";
import { execStreamFormat } from "../../../../../../lib/server/exec-stream-format";
import { route } from "../../../../../../lib/server/route";
import { proxyJson, proxyStream } from "../../../../../../lib/server/upstream";
import { SandboxIdParams } from "../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

/** The contract lets /exec stream too: `stream: true` answers as /exec/stream does. */
const ExecOrStreamBody = ExecBody.extend({ stream: z.boolean().optional() });

// POST /api/v1/sandboxes/[id]/exec – run a command to completion (a non-zero exit is a result); the sandbox is the upstream's to find (404 passed through)
export const POST = route(
  { auth: "user", perm: "sandboxes.write", params: SandboxIdParams, body: ExecOrStreamBody },
  async ({ req, team, recheck, params, body }) => {
    const { stream, ...exec } = body;
    if (!stream) return proxyJson(team, (orkestr) => orkestr.exec.run(params.id, exec));
    return proxyStream(
      team,
      (orkestr) => orkestr.exec.raw(params.id, exec, { format: execStreamFormat(req, null), signal: req.signal }),
      { recheck },
    );
  },
);
