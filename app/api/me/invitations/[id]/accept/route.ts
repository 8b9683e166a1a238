import { getMigratedDb } from "../../../../../../lib/server/db/index";
import { acceptById } from "../../../../../../lib/server/invitations";
import { route } from "../../../../../../lib/server/route";
import { InvitationParams } from "../../../../../../lib/validations/team";

export const runtime = "nodejs";

// POST /api/me/invitations/[id]/accept – accept one of the signed-in user's own pending invitations
export const POST = route({ auth: "user", params: InvitationParams }, async ({ user, params, ip }) => {
  const m = await acceptById(await getMigratedDb(), { id: params.id, user, ip });
  return { team_id: m.teamId, role: m.role };
});
