import { route } from "../../../../../../../lib/server/route";
import { proxyJson } from "../../../../../../../lib/server/upstream";
import { ProxyWriteBatchBody, SandboxIdParams } from "../../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

/** 25 MiB decoded in total (the contract's batch cap) as base64, plus JSON framing. */
const MAX_BATCH_BODY = 36 * 1024 * 1024;

// POST /api/v1/sandboxes/[id]/files/batch – several files; each row succeeds or fails alone (200 {written, errors})
export const POST = route(
  {
    auth: "user",
    perm: "sandboxes.write",
    params: SandboxIdParams,
    body: ProxyWriteBatchBody,
    maxBodyBytes: MAX_BATCH_BODY,
  },
  async ({ team, params, body, audit }) => {
    const res = await proxyJson(team, (orkestr) => orkestr.files.writeBatch(params.id, body));
    await audit("sandbox.file_write_batch", {
      target: params.id,
      data: { paths: body.map((f) => f.path).slice(0, 50) },
    });
    return res;
  },
);
