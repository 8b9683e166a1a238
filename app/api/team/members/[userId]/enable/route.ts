import { getMigratedDb } from "../../../../../../lib/server/db/index";
import { enableMember } from "../../../../../../lib/server/members";
import { route } from "../../../../../../lib/server/route";
import { actorOf } from "../../../../../../lib/server/team-api";
import { MemberParams } from "../../../../../../lib/validations/team";

export const runtime = "nodejs";

// POST /api/team/members/[userId]/enable – enable a member disabled in this team
export const POST = route(
  { auth: "user", perm: "members.manage", params: MemberParams },
  async ({ team, params, audit }) => {
    const { before, after } = await enableMember(await getMigratedDb(), actorOf(team), params.userId);
    await audit("member.enable", { target: params.userId, data: { before, after } });
    return { member: after };
  },
);
