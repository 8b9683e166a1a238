import { getMigratedDb } from "../../../../../../lib/server/db/index";
import { resendInvitation } from "../../../../../../lib/server/invitations";
import { route } from "../../../../../../lib/server/route";
import { actorOf, linkOrigin, toIssuedDto } from "../../../../../../lib/server/team-api";
import { InvitationParams } from "../../../../../../lib/validations/team";

export const runtime = "nodejs";

// POST /api/team/invitations/[id]/resend – a new link for the same address and role (mailed when
// mail is configured); the old link stops working
export const POST = route(
  { auth: "user", perm: "members.manage", params: InvitationParams },
  async ({ req, team, user, params, audit }) => {
    const actor = actorOf(team);
    const issued = await resendInvitation(await getMigratedDb(), {
      teamId: actor.teamId,
      id: params.id,
      inviter: { userId: actor.userId, role: actor.role, name: user.name, email: user.email },
      origin: linkOrigin(req),
    });
    await audit("invitation.resend", {
      target: issued.invitation.id,
      data: {
        before: { id: params.id },
        after: { id: issued.invitation.id, email: issued.invitation.email, mailed: issued.mailed },
      },
    });
    return toIssuedDto(issued);
  },
);
