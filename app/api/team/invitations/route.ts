import { getMigratedDb } from "../../../../lib/server/db/index";
import { inviteMember, listTeamInvitations } from "../../../../lib/server/invitations";
import { json, route } from "../../../../lib/server/route";
import { actorOf, linkOrigin, toInvitationDto, toIssuedDto } from "../../../../lib/server/team-api";
import { InviteBody } from "../../../../lib/validations/team";

export const runtime = "nodejs";

// GET /api/team/invitations – the acting team's pending invitations, newest first
export const GET = route({ auth: "user", perm: "members.manage" }, async ({ team }) => {
  const invitations = await listTeamInvitations(await getMigratedDb(), actorOf(team).teamId);
  return { invitations: invitations.map(toInvitationDto) };
});

// POST /api/team/invitations – invite {email, role}: never above the inviter's own role; a pending
// invitation to the same address is replaced. Answers the link once (mailed too when BATON_SMTP_URL is set).
export const POST = route(
  { auth: "user", perm: "members.manage", body: InviteBody },
  async ({ req, team, user, body, audit }) => {
    const actor = actorOf(team);
    const issued = await inviteMember(await getMigratedDb(), {
      teamId: actor.teamId,
      inviter: { userId: actor.userId, role: actor.role, name: user.name, email: user.email },
      email: body.email,
      role: body.role,
      origin: linkOrigin(req),
    });
    await audit("invitation.create", {
      target: issued.invitation.id,
      data: {
        before: issued.replaced.length ? { replaced: issued.replaced } : null,
        after: { email: issued.invitation.email, role: issued.invitation.role, mailed: issued.mailed },
      },
    });
    return json(toIssuedDto(issued), { status: 201 });
  },
);
