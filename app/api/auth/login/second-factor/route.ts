import { getMigratedDb } from "../../../../../lib/server/db/index";
import { deviceCookie } from "../../../../../lib/server/device-trust";
import { clearPendingLoginCookie, readPendingLoginToken } from "../../../../../lib/server/pending-login-cookie";
import { route } from "../../../../../lib/server/route";
import { encodeSessionJwt, sessionSetCookie } from "../../../../../lib/server/session-cookie";
import { completeSecondFactor, secondFactorError } from "../../../../../lib/server/sign-in";
import { SecondFactorBody } from "../../../../../lib/validations/account";

export const runtime = "nodejs";

// POST /api/auth/login/second-factor – the second step of a password sign-in for an account with
// two-factor authentication: the pending cookie POST /api/auth/login set, and `code` (the
// authenticator app's 6 digits, or a recovery code, each usable once). Sets the session cookie.
// Wrong codes count toward the same sign-in limits as wrong passwords (429 past them); five end
// the pending sign-in (401 sign_in_expired: the password again).
export const POST = route({ auth: "public", body: SecondFactorBody }, async ({ req, body, ip, userAgent, secure }) => {
  const outcome = await completeSecondFactor(await getMigratedDb(), {
    pendingToken: readPendingLoginToken(req.headers.get("cookie")),
    code: body.code,
    ip,
    userAgent,
  });
  if (!outcome.ok) {
    const error = secondFactorError(outcome);
    if (outcome.reason === "invalid_code" && outcome.attemptsLeft > 0) throw error;
    if (outcome.reason === "rate_limited") throw error;
    // The pending sign-in is over: its cookie goes too.
    const res = Response.json({ detail: error.detail, code: error.code }, { status: error.status });
    res.headers.append("set-cookie", clearPendingLoginCookie(secure));
    return res;
  }
  const headers = new Headers({ "content-type": "application/json" });
  headers.append("set-cookie", sessionSetCookie(await encodeSessionJwt(outcome.token), secure));
  headers.append("set-cookie", deviceCookie(outcome.deviceToken, secure));
  headers.append("set-cookie", clearPendingLoginCookie(secure));
  const { user } = outcome;
  return new Response(JSON.stringify({ user: { id: user.id, name: user.name, email: user.email } }), {
    status: 200,
    headers,
  });
});
