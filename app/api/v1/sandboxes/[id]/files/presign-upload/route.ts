import { PresignBody } from "../../../../../../../lib/orkestr/schemas/files";
import { presignedAnswer } from "../../../../../../../lib/server/file-links";
import { json, route } from "../../../../../../../lib/server/route";
import { withUpstream } from "../../../../../../../lib/server/upstream";
import { SandboxIdParams } from "../../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// POST /api/v1/sandboxes/[id]/files/presign-upload – an upload link (PUT) for a file. As for downloads,
// the answer points at Baton's own files/raw route, never at the upstream (see file-links.ts).
export const POST = route(
  { auth: "user", perm: "sandboxes.write", params: SandboxIdParams, body: PresignBody },
  async ({ req, current, team, params, body, audit }) => {
    const presigned = await withUpstream(team, (orkestr) =>
      orkestr.files.presignUpload(params.id, body.path, {
        expiresInSeconds: body.expires_in_seconds,
        maxBytes: body.max_bytes,
      }),
    );
    await audit("sandbox.file_presign_upload", { target: params.id, data: { path: body.path } });
    // An API token's client gets a Baton-signed link it can use without a header (file-links.ts).
    return json(
      presignedAnswer(
        { req, current, team },
        {
          method: "PUT",
          sandboxId: params.id,
          requestedPath: body.path,
          expiresInSeconds: body.expires_in_seconds,
          maxBytes: body.max_bytes,
        },
        presigned,
      ),
    );
  },
);
