import { getMigratedDb } from "../../../../lib/server/db/index";
import { listInvitationsForEmail } from "../../../../lib/server/invitations";
import { route } from "../../../../lib/server/route";
import { toInvitationDto } from "../../../../lib/server/team-api";
import type { MyInvitationDto } from "../../../../lib/validations/team";

export const runtime = "nodejs";

// GET /api/me/invitations – the pending invitations sent to the signed-in user's address
export const GET = route({ auth: "user" }, async ({ user }) => {
  const list = await listInvitationsForEmail(await getMigratedDb(), user.email);
  return { invitations: list.map((i): MyInvitationDto => ({ ...toInvitationDto(i), team: i.team })) };
});
