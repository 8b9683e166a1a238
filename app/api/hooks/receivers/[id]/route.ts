import { getMigratedDb } from "../../../../../lib/server/db/index";
import { AppError } from "../../../../../lib/server/errors";
import { ReceiverParams } from "../../../../../lib/server/hooks/schemas";
import { stopReceiving } from "../../../../../lib/server/hooks/setup";
import { route } from "../../../../../lib/server/route";

export const runtime = "nodejs";

// DELETE /api/hooks/receivers/[id] – stop receiving: deletes the upstream webhook and the receiver
// with its recorded events. Only the receiver of the connection the request acts through; any other id is 404.
export const DELETE = route(
  { auth: "user", perm: "webhooks.write", params: ReceiverParams, audit: "webhook_receiver.delete" },
  async ({ team, params }) => {
    if (!(await stopReceiving(await getMigratedDb(), team, params.id)))
      throw new AppError("not_found", "This receiver does not exist, or belongs to another connection.");
  },
);
