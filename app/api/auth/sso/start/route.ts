import { z } from "zod";
import { getMigratedDb } from "../../../../../lib/server/db/index";
import { emailDomain, findSsoDomain } from "../../../../../lib/server/db/sso";
import { findTeamBySlug, getTeam } from "../../../../../lib/server/db/teams";
import { route } from "../../../../../lib/server/route";
import { SsoFailure, recordSsoFailure, startSsoSignIn } from "../../../../../lib/server/sso/flow";
import { loginWithError, redirectTo } from "../../../../../lib/server/sso/http";
import { safeNextPath } from "../../../../../lib/safe-next-path";

export const runtime = "nodejs";

const Query = z.object({
  team: z.string().trim().max(64).optional(),
  email: z.string().trim().max(254).optional(),
  next: z.string().max(2048).optional(),
});

// GET /api/auth/sso/start?team=<slug> | ?email=<address> – public: sends the browser to the team's
// identity provider (state, nonce and a PKCE verifier are kept server-side, single use). Failures
// come back to /login with a code the page words (lib/sso-messages.ts).
export const GET = route({ auth: "public", query: Query }, async ({ req, query, ip }) => {
  const db = await getMigratedDb();
  let teamId: string | null = null;
  let slug: string | null = null;
  if (query.team) {
    const team = await findTeamBySlug(db, query.team.toLowerCase());
    teamId = team?.id ?? null;
    slug = team?.slug ?? null;
  } else if (query.email && query.email.includes("@")) {
    const domain = await findSsoDomain(db, emailDomain(query.email));
    // An unapproved claim does not send the domain's people to the claiming team's IdP.
    if (domain && domain.approvedAt === null) return redirectTo(loginWithError("sso_domain_unapproved"));
    if (domain) {
      teamId = domain.teamId;
      slug = (await getTeam(db, domain.teamId))?.slug ?? null;
    }
  }
  if (!teamId) return redirectTo(loginWithError("unknown_team"));
  try {
    const url = await startSsoSignIn(db, {
      teamId,
      purpose: "sign_in",
      headers: req.headers,
      loginHint: query.email?.includes("@") ? query.email : null,
      nextPath: safeNextPath(query.next ?? null),
    });
    return redirectTo(url.href);
  } catch (err) {
    if (!(err instanceof SsoFailure)) throw err;
    await recordSsoFailure(db, err, { ip });
    return redirectTo(loginWithError(err.code, slug));
  }
});
