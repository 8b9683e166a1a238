import { hasPassword } from "../../../../lib/server/account";
import { getMigratedDb } from "../../../../lib/server/db/index";
import { listActiveSessions } from "../../../../lib/server/db/sessions";
import { route } from "../../../../lib/server/route";
import { secondFactorState } from "../../../../lib/server/second-factor";
import type { SecurityDto } from "../../../../lib/validations/account";

export const runtime = "nodejs";

// GET /api/me/security – how the user signs in: whether they have a password, their second factor
// (on, being set up, recovery codes left) and how many sessions are live. No secret in it.
export const GET = route({ auth: "user" }, async ({ current }): Promise<SecurityDto> => {
  const db = await getMigratedDb();
  const [password, totp, sessions] = await Promise.all([
    hasPassword(db, current),
    secondFactorState(db, current.user.id),
    listActiveSessions(db, current.user.id),
  ]);
  return {
    has_password: password,
    totp: {
      enabled: totp.enabled,
      confirmed_at: totp.confirmedAt?.toISOString() ?? null,
      enrolling: totp.enrolling,
      recovery_codes_left: totp.recoveryCodesLeft,
    },
    sessions: sessions.length,
  };
});
