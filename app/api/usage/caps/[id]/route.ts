import { z } from "zod";
import { getMigratedDb } from "../../../../../lib/server/db/index";
import { AppError } from "../../../../../lib/server/errors";
import { route } from "../../../../../lib/server/route";
import { capsView } from "../../../../../lib/server/usage/caps-api";
import { deleteCap } from "../../../../../lib/server/usage/caps-store";

export const runtime = "nodejs";

const Params = z.object({ id: z.string().min(1).max(100) });

// DELETE /api/usage/caps/:id – removes one of the team's caps (billing.manage). A cap of another
// team is "not found", as one that never existed. Audited with what it was.
export const DELETE = route(
  { auth: "user", perm: "billing.manage", params: Params },
  async ({ team, params, audit }) => {
    const db = await getMigratedDb();
    const removed = await deleteCap(db, team!.team.id, params.id);
    if (!removed) throw new AppError("not_found", "This team has no such spend cap.");
    await audit("spend_cap.delete", {
      targetType: "spend_cap",
      targetId: removed.id,
      data: {
        before: {
          subject: removed.userId ?? "team",
          window: removed.window,
          limit_micro: removed.limitMicro,
          action: removed.action,
        },
        after: null,
      },
    });
    return capsView(db, team!);
  },
);
