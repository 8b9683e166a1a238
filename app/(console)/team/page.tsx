import type { Metadata } from "next";
import { PageHeader } from "../../../components/layout/page-header";
import { InvitationsCard, MyInvitations } from "../../../components/team/invitations-card";
import { MembersCard } from "../../../components/team/members-card";
import { requireTeam, requireUser } from "../../../lib/server/auth";
import { can } from "../../../lib/server/rbac";

export const metadata: Metadata = { title: "Team" };

// /team: the acting team's members and invitations. Everyone in the team sees the members; owners
// and admins manage them (members.manage, as the API checks); the user's own pending invitations
// (to any team) are offered on top, also to a user who has no team yet.
export default async function TeamPage() {
  const current = await requireUser();
  const team = await requireTeam(current);
  const canManage = can(team?.role, "members.manage");
  return (
    <>
      <PageHeader
        title={team ? `Team ${team.team.name}` : "Team"}
        description={
          team
            ? `Who is in ${team.team.name}, with which role. You are ${team.role}.`
            : "You are not a member of a team yet. Accept an invitation below, or ask a team's owner or admin to invite you."
        }
      />
      <div className="flex flex-col gap-6">
        <MyInvitations />
        {team ? <MembersCard teamId={team.team.id} canManage={canManage} /> : null}
        {team && canManage ? <InvitationsCard yourRole={team.role} /> : null}
      </div>
    </>
  );
}
