import { getMigratedDb } from "../../../../lib/server/db/index";
import { AppError } from "../../../../lib/server/errors";
import { leaveTeam } from "../../../../lib/server/members";
import { route } from "../../../../lib/server/route";
import { actorOf } from "../../../../lib/server/team-api";
import { LeaveBody } from "../../../../lib/validations/team";

export const runtime = "nodejs";

// POST /api/team/leave – leave the acting team ({team_id} must name it); refused for the last
// owner, who transfers ownership first. Their engine tokens of the team are revoked at once.
export const POST = route({ auth: "user", perm: "team.read", body: LeaveBody }, async ({ team, body, audit }) => {
  const actor = actorOf(team);
  if (body.team_id !== actor.teamId)
    throw new AppError(
      "conflict",
      "You are acting in another team than the one you asked to leave. Reload and try again.",
    );
  const { before, revokedTokens } = await leaveTeam(await getMigratedDb(), actor);
  await audit("member.leave", {
    target: actor.userId,
    data: { before, after: null, engine_tokens_revoked: revokedTokens },
  });
  return { left: actor.teamId };
});
