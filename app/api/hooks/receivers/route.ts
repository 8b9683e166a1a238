import { getMigratedDb } from "../../../../lib/server/db/index";
import { currentReceiver, receiveInBaton } from "../../../../lib/server/hooks/setup";
import { teamReceiverWebhookIds } from "../../../../lib/server/hooks/store";
import { receiverView } from "../../../../lib/server/hooks/view";
import { json, route } from "../../../../lib/server/route";

export const runtime = "nodejs";

// GET /api/hooks/receivers – the user's receiver on the acting team's connection (`receiver`, or
// null), and `team_webhook_ids`: the webhook ids of every receiver of that team's connections, the
// user's own and their teammates' (only that team's), which the webhooks pages mark and offer no
// rotate, edit or delete for (the API refuses those: lib/server/hooks/owned-webhooks.ts).
export const GET = route({ auth: "user", perm: "webhooks.read" }, async ({ team }) => {
  const db = await getMigratedDb();
  const receiver = await currentReceiver(db, team);
  return {
    receiver: receiver ? receiverView(receiver) : null,
    // Without a connection there is no webhook list to mark.
    team_webhook_ids: team?.connection ? await teamReceiverWebhookIds(db, team.team.id) : [],
  };
});

// POST /api/hooks/receivers – "Receive in Baton": makes the webhook upstream (201), or answers the
// one there is (200). The secret stays on the server, encrypted.
export const POST = route(
  { auth: "user", perm: "webhooks.write", audit: "webhook_receiver.create" },
  async ({ team }) => {
    const { receiver, created } = await receiveInBaton(await getMigratedDb(), team);
    return json({ receiver: receiverView(receiver), created }, { status: created ? 201 : 200 });
  },
);
