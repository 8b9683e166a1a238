import { getMigratedDb } from "../../../../../../../lib/server/db/index";
import { revokeMemberSession } from "../../../../../../../lib/server/members";
import { route } from "../../../../../../../lib/server/route";
import { actorOf } from "../../../../../../../lib/server/team-api";
import { MemberSessionParams } from "../../../../../../../lib/validations/team";

export const runtime = "nodejs";

// DELETE /api/team/members/[userId]/sessions/[sessionId] – revoke one of a member's sessions
export const DELETE = route(
  { auth: "user", perm: "members.manage", params: MemberSessionParams },
  async ({ team, params, audit }) => {
    await revokeMemberSession(await getMigratedDb(), actorOf(team), params.userId, params.sessionId);
    await audit("member.session_revoke", {
      target: params.userId,
      data: { before: { session: "active" }, after: { session: "revoked" } },
    });
  },
);
