import { checkOwnCode } from "../../../../../lib/server/account";
import { getMigratedDb } from "../../../../../lib/server/db/index";
import { AppError } from "../../../../../lib/server/errors";
import { route } from "../../../../../lib/server/route";
import { hasSecondFactor, replaceRecoveryCodes } from "../../../../../lib/server/second-factor";
import { TotpCodeBody } from "../../../../../lib/validations/account";

export const runtime = "nodejs";

// POST /api/me/totp/recovery-codes – new recovery codes (the old ones stop working), for a current
// code from the authenticator app. Shown once. Audited (user.recovery_codes_regenerate).
export const POST = route({ auth: "user", body: TotpCodeBody }, async ({ current, body, audit }) => {
  const db = await getMigratedDb();
  if (!(await hasSecondFactor(db, current.user.id)))
    throw new AppError("totp_not_enabled", "Two-factor authentication is not on.");
  await checkOwnCode(db, current, body.code, { recovery: false });
  const codes = await replaceRecoveryCodes(db, current.user.id);
  await audit("user.recovery_codes_regenerate", { target: current.user.id });
  return { recovery_codes: codes };
});
