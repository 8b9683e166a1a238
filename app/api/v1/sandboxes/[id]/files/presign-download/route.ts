import { PresignBody } from "../../../../../../../lib/orkestr/schemas/files";
import { presignedAnswer } from "../../../../../../../lib/server/file-links";
import { json, route } from "../../../../../../../lib/server/route";
import { withUpstream } from "../../../../../../../lib/server/upstream";
import { SandboxIdParams } from "../../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// POST /api/v1/sandboxes/[id]/files/presign-download – a download link for a file. The upstream's
// presigned URL is not handed out: the answer points at Baton's own files/raw route (see file-links.ts).
// A POST that only reads, so it needs sandboxes.read, like GET files/raw itself.
export const POST = route(
  { auth: "user", perm: "sandboxes.read", params: SandboxIdParams, body: PresignBody },
  async ({ req, current, team, params, body }) => {
    const presigned = await withUpstream(team, (orkestr) =>
      orkestr.files.presignDownload(params.id, body.path, { expiresInSeconds: body.expires_in_seconds }),
    );
    // An API token's client gets a Baton-signed link it can use without a header (file-links.ts).
    return json(
      presignedAnswer(
        { req, current, team },
        { method: "GET", sandboxId: params.id, requestedPath: body.path, expiresInSeconds: body.expires_in_seconds },
        presigned,
      ),
    );
  },
);
