import { LoginBody } from "../../../../lib/validations/auth";
import { signInThroughNextAuth } from "../../../../lib/server/next-auth";
import { route } from "../../../../lib/server/route";
import { signInError } from "../../../../lib/server/sign-in";

export const runtime = "nodejs";

// POST /api/auth/login – sign in with email and password; sets next-auth's session cookie.
// Wrong email and wrong password answer alike (401 invalid_credentials); too many attempts per
// address or per client IP answer 429 rate_limited with Retry-After.
export const POST = route({ auth: "public", body: LoginBody }, async ({ req, body }) => {
  const { outcome, setCookies } = await signInThroughNextAuth(req, body);
  if (!outcome.ok) throw signInError(outcome);
  const headers = new Headers({ "content-type": "application/json" });
  for (const cookie of setCookies) headers.append("set-cookie", cookie);
  const { user } = outcome;
  return new Response(JSON.stringify({ user: { id: user.id, name: user.name, email: user.email } }), {
    status: 200,
    headers,
  });
});
