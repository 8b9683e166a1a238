import { getMigratedDb } from "../../../../lib/server/db/index";
import { getSsoConfig } from "../../../../lib/server/db/sso";
import { listMembers } from "../../../../lib/server/members";
import { route } from "../../../../lib/server/route";
import { actorOf, sandboxCountsByCreator, toMemberDto } from "../../../../lib/server/team-api";
import type { MemberListDto } from "../../../../lib/validations/team";

export const runtime = "nodejs";

// GET /api/team/members – the acting team's members: role, how they sign in, last active, sessions,
// lockout, and how many live sandboxes each created (null when the team's orkestr API is unavailable)
export const GET = route({ auth: "user", perm: "team.read" }, async ({ team }): Promise<MemberListDto> => {
  const actor = actorOf(team);
  const db = await getMigratedDb();
  const [members, counts, sso] = await Promise.all([
    listMembers(db, actor.teamId),
    sandboxCountsByCreator(team),
    getSsoConfig(db, actor.teamId),
  ]);
  return {
    members: members.map((m) => toMemberDto(m, actor.userId, counts)),
    team: { id: team!.team.id, name: team!.team.name, slug: team!.team.slug },
    your_role: actor.role,
    roles_synced: sso?.groupSync === true,
  };
});
