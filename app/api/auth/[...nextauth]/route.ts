import type { NextRequest } from "next/server";
import NextAuth from "next-auth";
import { errorResponse } from "../../../../lib/server/errors";
import { buildAuthOptions } from "../../../../lib/server/next-auth";
import { isSecureRequest } from "../../../../lib/server/request-info";
import { checkHost } from "../../../../lib/server/route";

export const runtime = "nodejs";

type Context = { params: Promise<{ nextauth: string[] }> };

// GET|POST /api/auth/* – next-auth's own endpoints: csrf, session, providers, signout (which also
// revokes the session row), and the sign-in and callback routes that per-team OIDC providers will use.
// The one handler not built with route(): next-auth answers in its own shapes. The options are built
// for every request (advanced initialization), so providers loaded from the database apply at once.
// Email + password sign-in goes through POST /api/auth/login (rate limits, `{detail, code}` errors).
async function handler(req: NextRequest, ctx: Context): Promise<Response> {
  const [action, provider] = (await ctx.params).nextauth;
  // Not built with route(), so its first check is made here: only Baton's own Host names.
  const hostError = checkHost(req);
  if (hostError) return errorResponse(hostError);
  if (req.method === "POST" && (action === "callback" || action === "signin") && provider === "credentials") {
    return Response.json({ detail: "Sign in with POST /api/auth/login.", code: "not_found" }, { status: 404, headers: { "cache-control": "no-store" } });
  }
  try {
    const options = await buildAuthOptions({ secure: isSecureRequest(req) });
    return (await NextAuth(req, ctx, options)) as Response;
  } catch (err) {
    return errorResponse(err, `${req.method} /api/auth/${action ?? ""}`);
  }
}

export { handler as GET, handler as POST };
