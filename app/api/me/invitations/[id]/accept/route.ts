import { getMigratedDb } from "../../../../../../lib/server/db/index";
import { getTeam } from "../../../../../../lib/server/db/teams";
import { acceptById } from "../../../../../../lib/server/invitations";
import { route } from "../../../../../../lib/server/route";
import { InvitationParams } from "../../../../../../lib/validations/team";

export const runtime = "nodejs";

// POST /api/me/invitations/[id]/accept – accept one of the signed-in user's own pending invitations
export const POST = route({ auth: "user", params: InvitationParams }, async ({ user, params, ip }) => {
  const db = await getMigratedDb();
  const m = await acceptById(db, { id: params.id, user, ip });
  // The inviting team's slug: the browser lands in that team (?team=<slug>).
  const team = await getTeam(db, m.teamId);
  return { team_id: m.teamId, team_slug: team?.slug ?? null, role: m.role };
});
