import { getMigratedDb } from "../../../../../../lib/server/db/index";
import { disableMember } from "../../../../../../lib/server/members";
import { route } from "../../../../../../lib/server/route";
import { actorOf } from "../../../../../../lib/server/team-api";
import { MemberParams } from "../../../../../../lib/validations/team";

export const runtime = "nodejs";

// POST /api/team/members/[userId]/disable – disable a member in this team: their membership grants
// nothing, every session of theirs and their engine tokens of the team are revoked at once
export const POST = route(
  { auth: "user", perm: "members.manage", params: MemberParams },
  async ({ team, params, audit }) => {
    const r = await disableMember(await getMigratedDb(), actorOf(team), params.userId);
    await audit("member.disable", {
      target: params.userId,
      data: {
        before: r.before,
        after: r.after,
        sessions_revoked: r.revokedSessions,
        engine_tokens_revoked: r.revokedTokens,
      },
    });
    return { member: r.after, sessions_revoked: r.revokedSessions, engine_tokens_revoked: r.revokedTokens };
  },
);
