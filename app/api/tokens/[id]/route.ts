import { revokeTeamApiToken } from "../../../../lib/server/api-tokens/manage";
import { getMigratedDb } from "../../../../lib/server/db/index";
import { route } from "../../../../lib/server/route";
import { ApiTokenParams } from "../../../../lib/validations/api-tokens";

export const runtime = "nodejs";

// DELETE /api/tokens/:id – revokes a token of the acting team: one's own, or anyone's for admins and
// owners (another member's is 404 to a member). It stops working at once. Cookie-only.
export const DELETE = route(
  { auth: "user", perm: "team.read", params: ApiTokenParams },
  async ({ team, params, audit }) => {
    const { token, revoked } = await revokeTeamApiToken(await getMigratedDb(), team!, params.id);
    if (revoked) {
      await audit("api_token.revoke", {
        targetType: "api_token",
        targetId: token.id,
        data: { name: token.name, scope: token.scope, owner: token.userId, reason: "revoked" },
      });
    }
    return { revoked: true, already: !revoked };
  },
);
