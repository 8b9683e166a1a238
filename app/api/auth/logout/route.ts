import { signOut } from "../../../../lib/server/auth";
import { route } from "../../../../lib/server/route";
import { clearSessionCookies, parseCookieHeader } from "../../../../lib/server/session-cookie";

export const runtime = "nodejs";

// POST /api/auth/logout – sign out: revokes this session server-side and deletes the cookie.
// Answers 200 without a live session too (the cookie is deleted either way).
export const POST = route({ auth: "optional" }, async ({ req, current, ip, secure }) => {
  if (current) await signOut(current, { ip });
  const headers = new Headers({ "content-type": "application/json" });
  for (const cookie of clearSessionCookies(parseCookieHeader(req.headers.get("cookie")), secure))
    headers.append("set-cookie", cookie);
  return new Response(JSON.stringify({ signed_out: current !== null }), { status: 200, headers });
});
