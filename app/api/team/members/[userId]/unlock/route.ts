import { getMigratedDb } from "../../../../../../lib/server/db/index";
import { unlockMember } from "../../../../../../lib/server/members";
import { route } from "../../../../../../lib/server/route";
import { actorOf } from "../../../../../../lib/server/team-api";
import { MemberParams } from "../../../../../../lib/validations/team";

export const runtime = "nodejs";

// POST /api/team/members/[userId]/unlock – clear a member's sign-in lockout (failed attempts for their address)
export const POST = route(
  { auth: "user", perm: "members.manage", params: MemberParams },
  async ({ team, params, audit }) => {
    const { email } = await unlockMember(await getMigratedDb(), actorOf(team), params.userId);
    await audit("member.unlock", {
      target: params.userId,
      data: { before: { email, locked: true }, after: { email, locked: false } },
    });
    return { unlocked: params.userId };
  },
);
