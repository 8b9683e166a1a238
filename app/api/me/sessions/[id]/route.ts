import { sessionOf } from "../../../../../lib/server/auth";
import { revokeOwnSession } from "../../../../../lib/server/account";
import { getMigratedDb } from "../../../../../lib/server/db/index";
import { AppError } from "../../../../../lib/server/errors";
import { route } from "../../../../../lib/server/route";
import { SessionParams } from "../../../../../lib/validations/account";

export const runtime = "nodejs";

// DELETE /api/me/sessions/[id] – sign out one of the user's own sessions (this one too, if asked).
// Another user's session, or one that already ended, is 404. Audited (session.revoke).
export const DELETE = route({ auth: "user", params: SessionParams }, async ({ current, params, audit }) => {
  if (!(await revokeOwnSession(await getMigratedDb(), current, params.id)))
    throw new AppError("not_found", "No such session: it has ended already, or it is not yours.");
  await audit("session.revoke", { target: current.user.id, data: { current: params.id === sessionOf(current).id } });
  return { revoked: true, current: params.id === sessionOf(current).id };
});
