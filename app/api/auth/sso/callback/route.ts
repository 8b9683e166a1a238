import { getMigratedDb } from "../../../../../lib/server/db/index";
import { getTeam } from "../../../../../lib/server/db/teams";
import { route } from "../../../../../lib/server/route";
import { finishSsoSignIn, recordSsoFailure, SsoFailure } from "../../../../../lib/server/sso/flow";
import { loginWithError, redirectTo, ssoSessionCookie } from "../../../../../lib/server/sso/http";

export const runtime = "nodejs";

// GET /api/auth/sso/callback – public: where the IdP sends the browser back. The state must name an
// unused sign-in of this instance; openid-client checks the rest (lib/server/sso/flow.ts). A
// sign-in sets the session cookie; a test sign-in records its result for /settings/sso.
export const GET = route({ auth: "public" }, async ({ req, ip, userAgent, secure }) => {
  const db = await getMigratedDb();
  try {
    const outcome = await finishSsoSignIn(db, { callbackUrl: req.url, headers: req.headers, ip, userAgent });
    if (outcome.purpose === "test" || !outcome.session) return redirectTo("/settings/sso?test=done");
    const { token, maxAgeSeconds } = outcome.session;
    return redirectTo(outcome.nextPath ?? "/sandboxes", [await ssoSessionCookie(token, maxAgeSeconds, secure)]);
  } catch (err) {
    if (!(err instanceof SsoFailure)) throw err;
    await recordSsoFailure(db, err, { ip });
    if (err.purpose === "test") return redirectTo("/settings/sso?test=failed");
    const slug = err.teamId ? ((await getTeam(db, err.teamId))?.slug ?? null) : null;
    return redirectTo(loginWithError(err.code, slug));
  }
});
