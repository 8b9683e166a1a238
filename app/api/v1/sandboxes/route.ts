import { CreateSandboxBody } from "../../../../lib/orkestr/schemas/sandboxes";
import { recordTokenSandbox } from "../../../../lib/server/api-tokens/limits";
import { creatorVia, stampCreate } from "../../../../lib/server/creator-stamp";
import { viaOf } from "../../../../lib/server/request-via";
import { jsonResponse } from "../../../../lib/server/json-response";
import { getMigratedDb } from "../../../../lib/server/db/index";
import { route } from "../../../../lib/server/route";
import { underCaps } from "../../../../lib/server/usage/cap-check";
import { idempotencyFrom, proxyPage, withUpstream } from "../../../../lib/server/upstream";
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
// own baton.* keys are a 422 reserved_metadata. Audited with the new sandbox's id as its target.
export const POST = route(
  { auth: "user", perm: "sandboxes.write", body: CreateSandboxBody },
  async ({ req, current, team, body, audit }) => {
    const stamped = stampCreate(body, team!, creatorVia(current, viaOf(req)));
    // A reached spend cap (block or pause) refuses it: 402 spend_cap_reached, checked under the
    // team's cap lock so parallel creates are checked one at a time.
    const db = await getMigratedDb();
    const sandbox = await underCaps(db, team!, body.snapshot ? "fork a sandbox" : "create a sandbox", () =>
      withUpstream(team, (orkestr) => orkestr.sandboxes.create(stamped, idempotencyFrom(req))),
    );
    // Made with an API token: its spend counts against the token's own cap (api-tokens/limits.ts).
    if (team!.apiToken)
      await recordTokenSandbox(db, { teamId: team!.team.id, sandboxId: sandbox.id, tokenId: team!.apiToken.id });
    await audit("sandbox.create", {
      targetType: "sandbox",
      targetId: sandbox.id,
      data: { template: body.template ?? null },
    });
    return jsonResponse(sandbox, { status: 201 });
  },
);
