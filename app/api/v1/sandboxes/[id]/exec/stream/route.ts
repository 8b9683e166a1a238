import { ExecBody } from "../../../../../../../lib/orkestr/schemas/exec";
import { execStreamFormat } from "../../../../../../../lib/server/exec-stream-format";
import { route } from "../../../../../../../lib/server/route";
import { proxyStream } from "../../../../../../../lib/server/upstream";
import { ExecStreamQuery, SandboxIdParams } from "../../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// POST /api/v1/sandboxes/[id]/exec/stream – output chunks as they come (SSE, or NDJSON with ?format=ndjson or Accept: application/x-ndjson), passed through unbuffered
export const POST = route(
  { auth: "user", perm: "sandboxes.write", params: SandboxIdParams, query: ExecStreamQuery, body: ExecBody },
  async ({ req, team, recheck, params, query, body }) =>
    // The browser going away aborts the upstream call, so the command is not left streaming to nobody.
    proxyStream(
      team,
      (orkestr) =>
        orkestr.exec.raw(params.id, body, { format: execStreamFormat(req, query.format), signal: req.signal }),
      { recheck },
    ),
);
