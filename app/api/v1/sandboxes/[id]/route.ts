import { UpdateSandboxBody } from "../../../../../lib/orkestr/schemas/sandboxes";
import { keepStampOnPatch } from "../../../../../lib/server/creator-stamp";
import { getMigratedDb } from "../../../../../lib/server/db/index";
import { route } from "../../../../../lib/server/route";
import { assertUnderCaps } from "../../../../../lib/server/usage/cap-check";
import { proxyJson } from "../../../../../lib/server/upstream";
import { SandboxIdParams } from "../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// Per-resource authorization: the id is looked up by the upstream with the user's own token, so a
// sandbox of another connection is a 404 from there (passed through), never someone else's data.

// GET /api/v1/sandboxes/[id] – one sandbox
export const GET = route({ auth: "user", perm: "sandboxes.read", params: SandboxIdParams }, async ({ team, params }) =>
  proxyJson(team, (orkestr) => orkestr.sandboxes.get(params.id)),
);

// PATCH /api/v1/sandboxes/[id] – metadata, timeout_seconds (the set_timeout alias), auto_resume, on_timeout.
// New metadata replaces the old but keeps Baton's creator stamp; baton.* keys sent are a 422.
export const PATCH = route(
  { auth: "user", perm: "sandboxes.write", params: SandboxIdParams, body: UpdateSandboxBody },
  async ({ team, params, body, audit }) => {
    // Keep-alive (timeout_seconds) and auto-resume would prolong spending: refused while a spend cap is reached.
    if (body.timeout_seconds !== undefined || body.auto_resume === true)
      await assertUnderCaps(
        await getMigratedDb(),
        team!,
        body.timeout_seconds !== undefined ? "extend a sandbox's time" : "turn on auto-resume",
      );
    const patch = await keepStampOnPatch(body, team!, params.id);
    const res = await proxyJson(team, (orkestr) => orkestr.sandboxes.update(params.id, patch));
    await audit("sandbox.update", { target: params.id, data: { fields: Object.keys(body) } });
    return res;
  },
);

// DELETE /api/v1/sandboxes/[id] – terminate (204, idempotent)
export const DELETE = route(
  { auth: "user", perm: "sandboxes.write", params: SandboxIdParams },
  async ({ team, params, audit }) => {
    const res = await proxyJson(team, (orkestr) => orkestr.sandboxes.terminate(params.id));
    await audit("sandbox.terminate", { target: params.id });
    return res;
  },
);
