import { getMigratedDb } from "../../../../../lib/server/db/index";
import { revokeInvitation } from "../../../../../lib/server/invitations";
import { route } from "../../../../../lib/server/route";
import { actorOf, toInvitationDto } from "../../../../../lib/server/team-api";
import { InvitationParams } from "../../../../../lib/validations/team";

export const runtime = "nodejs";

// DELETE /api/team/invitations/[id] – revoke a pending invitation; its link then says so
export const DELETE = route(
  { auth: "user", perm: "members.manage", params: InvitationParams },
  async ({ team, user, params, audit }) => {
    const actor = actorOf(team);
    const inv = await revokeInvitation(await getMigratedDb(), {
      teamId: actor.teamId,
      id: params.id,
      actor: { userId: actor.userId, role: actor.role, name: user.name, email: user.email },
    });
    await audit("invitation.revoke", {
      target: inv.id,
      data: { before: { email: inv.email, state: "pending" }, after: { email: inv.email, state: inv.state } },
    });
    return { invitation: toInvitationDto(inv) };
  },
);
