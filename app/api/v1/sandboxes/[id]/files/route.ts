import { route } from "../../../../../../lib/server/route";
import { proxyJson } from "../../../../../../lib/server/upstream";
import {
  DeleteFileQuery,
  FilePathQuery,
  ProxyWriteFileBody,
  SandboxIdParams,
} from "../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

/** 10 MiB decoded (the contract's cap for JSON file bodies) as base64, plus JSON framing. */
const MAX_WRITE_BODY = 14 * 1024 * 1024;

// GET /api/v1/sandboxes/[id]/files?path= – a file (base64 content) or a directory listing, as the upstream decides
export const GET = route(
  { auth: "user", perm: "sandboxes.read", params: SandboxIdParams, query: FilePathQuery },
  async ({ team, params, query }) => proxyJson(team, (orkestr) => orkestr.files.stat(params.id, query.path)),
);

// POST /api/v1/sandboxes/[id]/files – write one file ({path, content, encoding, mode}); parents are created (201 {path, size})
export const POST = route(
  {
    auth: "user",
    perm: "sandboxes.write",
    params: SandboxIdParams,
    body: ProxyWriteFileBody,
    maxBodyBytes: MAX_WRITE_BODY,
  },
  async ({ team, params, body, audit }) => {
    const res = await proxyJson(
      team,
      (orkestr) => orkestr.files.write(params.id, body.path, body.content, { mode: body.mode }),
      { status: 201 },
    );
    await audit("sandbox.file_write", { target: params.id, data: { path: body.path } });
    return res;
  },
);

// DELETE /api/v1/sandboxes/[id]/files?path=&recursive= – 204 (409 directory_not_empty without recursive)
export const DELETE = route(
  { auth: "user", perm: "sandboxes.write", params: SandboxIdParams, query: DeleteFileQuery },
  async ({ team, params, query, audit }) => {
    const res = await proxyJson(team, (orkestr) =>
      orkestr.files.delete(params.id, query.path, { recursive: query.recursive }),
    );
    await audit("sandbox.file_delete", {
      target: params.id,
      data: { path: query.path, recursive: query.recursive ?? false },
    });
    return res;
  },
);
