import "server-only";
import { resolveTeamChoice, type ActingTeam } from "../acting-team";
import { findApiTokenById } from "../db/api-tokens";
import type { Db } from "../db/index";
import { AppError } from "../errors";
import { verifyFileLink, type FileLinkClaims } from "../file-link-signature";
import { actingCan, type Permission } from "../rbac";
import { noteUse, tokenPrincipal, type TokenPrincipal } from "./bearer";

// A request to files/raw made with a Baton-signed link (lib/server/file-link-signature.ts), with
// no cookie and no Authorization: route() (option `signedLink`) asks here instead of the session or
// the Bearer header. The link is then the credential, and it is only ever as good as the API token
// that made it: it acts as that token (its user, its team, its role narrowed by its scope), so a
// revoked or expired token, a user disabled or removed from the team, or a role that no longer
// grants the route's permission ends every link the token made (403 link_revoked), before expiry;
// so does the token's SSO deadline passing (./sso-bound.ts).

export interface SignedLinkPrincipal extends TokenPrincipal {
  link: FileLinkClaims;
}

const REVOKED =
  "This file link is no longer valid: the API token that made it was revoked or has expired, or its owner no longer has this access. Ask for a new link.";

/**
 * The principal of a signed-link request, or throws 403 invalid_signature, 410 url_expired, 403
 * link_revoked (in that order). `now` is the request's time; an open download asking again (route()'s
 * recheck) passes the time it started, so a link that expires mid-stream does not cut it, while a
 * revocation still does.
 */
export async function resolveSignedLink(
  db: Db,
  req: Request,
  input: { sandboxId: string; perm: Permission; ip: string | null; now?: number; recheck?: boolean },
): Promise<SignedLinkPrincipal> {
  const now = input.now ?? Date.now();
  const check = verifyFileLink(req.method, input.sandboxId, new URL(req.url).searchParams, now);
  if (!check.ok) {
    throw check.code === "url_expired"
      ? new AppError("url_expired", "This file link has expired. Ask for a new one (links live at most an hour).")
      : new AppError(
          "invalid_signature",
          "This file link's signature does not match: it was changed, or is for another method, file, sandbox or team.",
        );
  }
  const { claims } = check;
  const row = await findApiTokenById(db, claims.tokenId);
  const made = row && (row.expiresAt === null || row.expiresAt.getTime() > now) ? await tokenPrincipal(db, row) : null;
  // The team the link was signed for must still be the token's (a slug handed to another team is not it).
  if (!row || !made || made.mine.team.slug !== claims.team || (made.sso && made.sso.deadline <= now))
    throw new AppError("link_revoked", REVOKED);
  const team: ActingTeam = {
    ...resolveTeamChoice(made.current, { slug: made.mine.team.slug })!,
    apiToken: { id: row.id, name: row.name, spendCapMicro: row.spendCapMicro, maxConcurrent: row.maxConcurrent },
  };
  if (!actingCan(team, input.perm)) throw new AppError("link_revoked", REVOKED);
  if (!input.recheck) await noteUse(db, row, { ip: input.ip, now, teamId: row.teamId, userId: row.userId });
  return { current: made.current, team, link: claims };
}
