import { getMigratedDb } from "../../../../../lib/server/db/index";
import { AppError } from "../../../../../lib/server/errors";
import { route } from "../../../../../lib/server/route";
import { confirmEnrolment } from "../../../../../lib/server/second-factor";
import { TotpCodeBody } from "../../../../../lib/validations/account";

export const runtime = "nodejs";

// POST /api/me/totp/confirm – finish setting up two-factor authentication with a first code from
// the app. From now on password sign-in asks for a code. Answers the recovery codes: the only time
// they are shown. Audited (user.totp_enable).
export const POST = route({ auth: "user", body: TotpCodeBody }, async ({ current, body, audit }) => {
  const codes = await confirmEnrolment(await getMigratedDb(), current.user.id, body.code);
  if (!codes)
    throw new AppError(
      "wrong_code",
      "Code: is not right. Check that your phone's clock is right and enter the code the app shows now.",
      { errors: { code: "is not right" } },
    );
  await audit("user.totp_enable", { target: current.user.id });
  return { enabled: true, recovery_codes: codes };
});
