import { getMigratedDb } from "../../../../../../lib/server/db/index";
import { declineById } from "../../../../../../lib/server/invitations";
import { route } from "../../../../../../lib/server/route";
import { InvitationParams } from "../../../../../../lib/validations/team";

export const runtime = "nodejs";

// POST /api/me/invitations/[id]/decline – decline one of the signed-in user's own pending invitations
export const POST = route({ auth: "user", params: InvitationParams }, async ({ user, params, ip }) => {
  await declineById(await getMigratedDb(), { id: params.id, user, ip });
});
