import { getMigratedDb } from "../../../../lib/server/db/index";
import { transferOwnership } from "../../../../lib/server/members";
import { route } from "../../../../lib/server/route";
import { actorOf } from "../../../../lib/server/team-api";
import { TransferOwnershipBody } from "../../../../lib/validations/team";

export const runtime = "nodejs";

// POST /api/team/transfer-ownership – make another member owner ({user_id}); the acting owner
// becomes admin unless {stay_owner: true}
export const POST = route(
  { auth: "user", perm: "ownership.transfer", body: TransferOwnershipBody },
  async ({ team, body, audit }) => {
    const { before, after } = await transferOwnership(await getMigratedDb(), actorOf(team), body.user_id, {
      stayOwner: body.stay_owner,
    });
    await audit("team.ownership_transfer", { target: body.user_id, data: { before, after } });
    return { members: after };
  },
);
