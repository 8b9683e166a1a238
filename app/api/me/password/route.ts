import { changePassword } from "../../../../lib/server/account";
import { getMigratedDb } from "../../../../lib/server/db/index";
import { route } from "../../../../lib/server/route";
import { PasswordChangeBody } from "../../../../lib/validations/account";

export const runtime = "nodejs";

// POST /api/me/password – change the password: the current one is required (422 wrong_password,
// limited per user), the new one follows the first-run rules. Every other session of the user is
// signed out; this one stays. Audited (user.password_change).
export const POST = route({ auth: "user", body: PasswordChangeBody }, async ({ current, body, audit }) => {
  const { sessionsRevoked } = await changePassword(await getMigratedDb(), current, {
    currentPassword: body.current_password,
    newPassword: body.new_password,
  });
  await audit("user.password_change", { target: current.user.id, data: { sessions_revoked: sessionsRevoked } });
  return { sessions_revoked: sessionsRevoked };
});
