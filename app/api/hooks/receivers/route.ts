import { getMigratedDb } from "../../../../lib/server/db/index";
import { currentReceiver, receiveInBaton } from "../../../../lib/server/hooks/setup";
import { receiverView } from "../../../../lib/server/hooks/view";
import { json, route } from "../../../../lib/server/route";

export const runtime = "nodejs";

// GET /api/hooks/receivers – the receiver of the acting team's connection: `{receiver}` or `{receiver: null}`.
export const GET = route({ auth: "user", perm: "webhooks.read" }, async ({ team }) => {
  const receiver = await currentReceiver(await getMigratedDb(), team);
  return { receiver: receiver ? receiverView(receiver) : null };
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
