import { sessionOf } from "../../../../../../lib/server/auth";
import { getMigratedDb } from "../../../../../../lib/server/db/index";
import { memberSessions } from "../../../../../../lib/server/members";
import { route } from "../../../../../../lib/server/route";
import { actorOf, toSessionDto } from "../../../../../../lib/server/team-api";
import { MemberParams } from "../../../../../../lib/validations/team";

export const runtime = "nodejs";

// GET /api/team/members/[userId]/sessions – a member's active sessions, most recently used first
export const GET = route(
  { auth: "user", perm: "members.manage", params: MemberParams },
  async ({ team, params, current }) => {
    const sessions = await memberSessions(await getMigratedDb(), actorOf(team), params.userId);
    return { sessions: sessions.map((s) => ({ ...toSessionDto(s), current: s.id === sessionOf(current).id })) };
  },
);
