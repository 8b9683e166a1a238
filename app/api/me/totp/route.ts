import { checkCurrentPassword, checkOwnCode } from "../../../../lib/server/account";
import { getMigratedDb } from "../../../../lib/server/db/index";
import { AppError } from "../../../../lib/server/errors";
import { clearPendingLogins } from "../../../../lib/server/pending-login-cookie";
import { route } from "../../../../lib/server/route";
import { hasSecondFactor, removeSecondFactor, startEnrolment } from "../../../../lib/server/second-factor";
import { totpQrDataUrl, totpUri } from "../../../../lib/server/totp";
import { DisableTotpBody, type TotpEnrolmentDto } from "../../../../lib/validations/account";

export const runtime = "nodejs";

// POST /api/me/totp – start setting up two-factor authentication: a new secret (not in force until
// POST /api/me/totp/confirm gets a right code), as an otpauth:// URI, its QR code (an SVG drawn on
// the server) and the key to type in by hand. 409 totp_enabled while one is on.
export const POST = route({ auth: "user" }, async ({ current }): Promise<TotpEnrolmentDto> => {
  const secret = await startEnrolment(await getMigratedDb(), current.user.id);
  const uri = totpUri(secret, current.user.email);
  return { secret, otpauth_uri: uri, qr_data_url: await totpQrDataUrl(uri) };
});

// DELETE /api/me/totp – turn two-factor authentication off: the password (or, for an account
// without one, a current code) is required. The secret and recovery codes go. Audited.
export const DELETE = route({ auth: "user", body: DisableTotpBody }, async ({ current, body, audit }) => {
  const db = await getMigratedDb();
  if (!(await hasSecondFactor(db, current.user.id))) {
    // An enrolment never confirmed is simply dropped.
    await removeSecondFactor(db, current.user.id);
    throw new AppError("totp_not_enabled", "Two-factor authentication is not on.");
  }
  if (body.password) await checkCurrentPassword(db, current, body.password);
  else await checkOwnCode(db, current, body.code!);
  await removeSecondFactor(db, current.user.id);
  await clearPendingLogins(db, current.user.id);
  await audit("user.totp_disable", { target: current.user.id });
  return { enabled: false };
});
