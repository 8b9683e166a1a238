import { DOWNLOAD_HEADERS, downloadName } from "../../../../../../../lib/server/file-links";
import { AppError } from "../../../../../../../lib/server/errors";
import { requestBody, requestBodyAtMost } from "../../../../../../../lib/server/request-bytes";
import { route } from "../../../../../../../lib/server/route";
import { proxyJson, proxyStream } from "../../../../../../../lib/server/upstream";
import { FilePathQuery, SandboxIdParams } from "../../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// Large files without base64: the bytes stream through Baton in both directions, never buffered,
// with the user's token added here (the browser gets neither the token nor an upstream URL).
// Both methods also take a Baton-signed link instead of a session or a Bearer header (route option
// `signedLink`, lib/server/file-link-signature.ts): what presign-download and presign-upload hand an
// API token's client, usable with no header at all until it expires or its token is revoked.

// GET /api/v1/sandboxes/[id]/files/raw?path= – the file's bytes (Range passed on: 206 partial content)
export const GET = route(
  { auth: "user", perm: "sandboxes.read", params: SandboxIdParams, query: FilePathQuery, signedLink: true },
  async ({ req, team, recheck, params, query }) =>
    proxyStream(
      team,
      (orkestr) =>
        orkestr.files.readRaw(params.id, query.path, {
          range: req.headers.get("range") ?? undefined,
          signal: req.signal,
        }),
      {
        recheck,
        headers: {
          ...DOWNLOAD_HEADERS,
          "content-disposition": `attachment; filename*=UTF-8''${encodeURIComponent(downloadName(query.path))}`,
        },
      },
    ),
);

// PUT /api/v1/sandboxes/[id]/files/raw?path= – the request body streamed into the file (201 {path, size})
export const PUT = route(
  { auth: "user", perm: "sandboxes.write", params: SandboxIdParams, query: FilePathQuery, signedLink: true },
  async ({ req, team, params, query, signedLink, audit }) => {
    // A signed upload link's max_bytes (the engine enforces its own only on its own URLs).
    const max = signedLink?.maxBytes ?? null;
    const capped = max !== null ? requestBodyAtMost(req, max) : null;
    const tooLarge = () =>
      new AppError("payload_too_large", `The upload is larger than this link's max_bytes (${max} bytes).`);
    if (capped?.tooLarge()) throw tooLarge();
    const res = await proxyJson(
      team,
      (orkestr) =>
        orkestr.files.writeRaw(params.id, query.path, (capped ? capped.body : requestBody(req)) ?? new Uint8Array(), {
          signal: req.signal,
        }),
      { status: 201 },
    ).catch((err: unknown) => {
      throw capped?.tooLarge() ? tooLarge() : err;
    });
    if (capped?.tooLarge()) throw tooLarge();
    await audit("sandbox.file_upload", {
      target: params.id,
      data: signedLink ? { path: query.path, via: "signed_link" } : { path: query.path },
    });
    return res;
  },
);
