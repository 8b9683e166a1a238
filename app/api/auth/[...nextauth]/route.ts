import { NextRequest } from "next/server";
import NextAuth from "next-auth";
import { errorResponse } from "../../../../lib/server/errors";
import { buildAuthOptions } from "../../../../lib/server/next-auth";
import { isSecureRequest } from "../../../../lib/server/request-info";
import { checkHost, checkOrigin, readBodyText } from "../../../../lib/server/route";

export const runtime = "nodejs";

type Context = { params: Promise<{ nextauth: string[] }> };

/** next-auth's own POST bodies are a CSRF token and a few fields (an OIDC form_post a few KiB). */
const MAX_BODY_BYTES = 64 * 1024;

// GET|POST /api/auth/* – next-auth's own endpoints: csrf, session, providers, signout (which also
// revokes the session row), and the sign-in and callback routes that per-team OIDC providers will use.
// The one handler not built with route(): next-auth answers in its own shapes. The options are built
// for every request (advanced initialization), so providers loaded from the database apply at once.
// Email + password sign-in goes through POST /api/auth/login (rate limits, `{detail, code}` errors).
async function handler(req: NextRequest, ctx: Context): Promise<Response> {
  const [action, provider] = (await ctx.params).nextauth;
  // Not built with route(), so route()'s first checks are made here: only Baton's own Host names,
  // and no cross-site mutation (next-auth's CSRF token is the second lock).
  const refused = checkHost(req) ?? checkOrigin(req);
  if (refused) return errorResponse(refused);
  if (req.method === "POST" && (action === "callback" || action === "signin") && provider === "credentials") {
    return Response.json(
      { detail: "Sign in with POST /api/auth/login.", code: "not_found" },
      { status: 404, headers: { "cache-control": "no-store" } },
    );
  }
  try {
    // next-auth reads the whole body with req.text(): read it here instead, counting bytes as they
    // arrive (413 past the limit, chunked or not), and hand next-auth the text.
    const request =
      req.method === "POST"
        ? new NextRequest(req.url, {
            method: "POST",
            headers: req.headers,
            body: await readBodyText(req, MAX_BODY_BYTES),
          })
        : req;
    const options = await buildAuthOptions({ secure: isSecureRequest(req) });
    return (await NextAuth(request, ctx, options)) as Response;
  } catch (err) {
    return errorResponse(err, `${req.method} /api/auth/${action ?? ""}`);
  }
}

export { handler as GET, handler as POST };
