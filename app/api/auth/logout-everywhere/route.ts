import { signOutEverywhere } from "../../../../lib/server/auth";
import { route } from "../../../../lib/server/route";
import { clearSessionCookies, parseCookieHeader } from "../../../../lib/server/session-cookie";

export const runtime = "nodejs";

// POST /api/auth/logout-everywhere – revoke every session of the signed-in user, this one included.
export const POST = route({ auth: "user" }, async ({ req, current, ip, secure }) => {
  const revoked = await signOutEverywhere(current, { ip });
  const headers = new Headers({ "content-type": "application/json" });
  for (const cookie of clearSessionCookies(parseCookieHeader(req.headers.get("cookie")), secure))
    headers.append("set-cookie", cookie);
  return new Response(JSON.stringify({ sessions_revoked: revoked }), { status: 200, headers });
});
