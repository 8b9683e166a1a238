import { CreateSandboxBody } from "../../../../lib/orkestr/schemas/sandboxes";
import { stampCreate } from "../../../../lib/server/creator-stamp";
import { route } from "../../../../lib/server/route";
import { idempotencyFrom, proxyJson, proxyPage } from "../../../../lib/server/upstream";
import { ProxyListSandboxesQuery } from "../../../../lib/validations/proxy";

export const runtime = "nodejs";

// Sandboxes are reached through the user's own connection of the team the request acts in only
// (tokens are per user): the upstream decides what that token sees, and its 404 for anything else
// is passed through.

// GET /api/v1/sandboxes – one page of the user's sandboxes (bare array, X-Next-Cursor)
export const GET = route(
  { auth: "user", perm: "sandboxes.read", query: ProxyListSandboxesQuery },
  async ({ team, query }) => proxyPage(team, (orkestr) => orkestr.sandboxes.list(query)),
);

// POST /api/v1/sandboxes – create a sandbox, or fork one from a snapshot (503 fleet_full comes
// back with Retry-After). Its metadata gets the creator stamp (baton.user, baton.team); a client's
// own baton.* keys are a 422 reserved_metadata.
export const POST = route(
  { auth: "user", perm: "sandboxes.write", body: CreateSandboxBody, audit: "sandbox.create" },
  async ({ req, team, body }) => {
    const stamped = stampCreate(body, team!);
    return proxyJson(team, (orkestr) => orkestr.sandboxes.create(stamped, idempotencyFrom(req)), { status: 201 });
  },
);
