import { LoginBody } from "../../../../lib/validations/auth";
import { signInThroughNextAuth } from "../../../../lib/server/next-auth";
import { pendingLoginCookie } from "../../../../lib/server/pending-login-cookie";
import { route } from "../../../../lib/server/route";
import { signInError } from "../../../../lib/server/sign-in";

export const runtime = "nodejs";

// POST /api/auth/login – sign in with email and password; sets next-auth's session cookie.
// Wrong email and wrong password answer alike (401 invalid_credentials); too many attempts per
// address or per client IP answer 429 rate_limited with Retry-After. An account with a second
// factor answers `{ second_factor_required: true }` with a short-lived pending cookie instead of a
// session: the code goes to POST /api/auth/login/second-factor.
export const POST = route({ auth: "public", body: LoginBody }, async ({ req, body, secure }) => {
  const { outcome, setCookies } = await signInThroughNextAuth(req, body);
  if (!outcome.ok && outcome.reason === "second_factor_required") {
    const headers = new Headers({ "content-type": "application/json" });
    headers.append("set-cookie", pendingLoginCookie(outcome.pendingToken, secure));
    return new Response(JSON.stringify({ second_factor_required: true }), { status: 200, headers });
  }
  if (!outcome.ok) throw signInError(outcome);
  const headers = new Headers({ "content-type": "application/json" });
  for (const cookie of setCookies) headers.append("set-cookie", cookie);
  const { user } = outcome;
  return new Response(JSON.stringify({ user: { id: user.id, name: user.name, email: user.email } }), {
    status: 200,
    headers,
  });
});
