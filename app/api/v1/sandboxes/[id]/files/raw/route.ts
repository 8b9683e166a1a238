import { DOWNLOAD_HEADERS, downloadName } from "../../../../../../../lib/server/file-links";
import { requestBody } from "../../../../../../../lib/server/request-bytes";
import { route } from "../../../../../../../lib/server/route";
import { proxyJson, proxyStream } from "../../../../../../../lib/server/upstream";
import { FilePathQuery, SandboxIdParams } from "../../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// Large files without base64: the bytes stream through Baton in both directions, never buffered,
// with the user's token added here (the browser gets neither the token nor an upstream URL).

// GET /api/v1/sandboxes/[id]/files/raw?path= – the file's bytes (Range passed on: 206 partial content)
export const GET = route(
  { auth: "user", perm: "sandboxes.read", params: SandboxIdParams, query: FilePathQuery },
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
  { auth: "user", perm: "sandboxes.write", params: SandboxIdParams, query: FilePathQuery },
  async ({ req, team, params, query, audit }) => {
    const res = await proxyJson(
      team,
      (orkestr) =>
        orkestr.files.writeRaw(params.id, query.path, requestBody(req) ?? new Uint8Array(), {
          signal: req.signal,
        }),
      { status: 201 },
    );
    await audit("sandbox.file_upload", { target: params.id, data: { path: query.path } });
    return res;
  },
);
