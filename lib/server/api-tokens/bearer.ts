import "server-only";
import { effectiveRole } from "../../api-tokens/scope";
import { resolveTeamChoice, type ActingTeam } from "../acting-team";
import { teamChoiceOf, type CurrentUser } from "../auth";
import { safeEqual } from "../crypto";
import { findApiTokenByHash, touchApiToken, type ApiToken } from "../db/api-tokens";
import { recordAudit } from "../db/audit";
import { listConnections } from "../db/connections";
import type { Db } from "../db/index";
import { hitRateLimit } from "../db/rate-limit";
import { listMembershipsForUser, type Team } from "../db/teams";
import { findUserById } from "../db/users";
import { AppError } from "../errors";
import { remembered } from "../session-cache";
import { apiTokenHash, API_TOKEN_PREFIX } from "./format";
import { ssoReauthDetail, ssoTokenBound, type SsoTokenBound } from "./sso-bound";

// A request made with a personal API token (`Authorization: Bearer bat_…`, only on /api/v1: see
// route.ts). It becomes the same principal a session gives route(), but narrowed:
// - the token's user, live: a disabled user, or one no longer in the token's team, is refused even
//   before the revocation that removal or disabling does (lib/server/access.ts) has happened;
// - one team, the token's: the principal is a member of that team only, so no other team can be
//   named (X-Baton-Team or ?team= naming another is 403 token_team_mismatch) and no other team's
//   connection is used;
// - the role in it narrowed by the scope (lib/api-tokens/scope.ts effectiveRole), so route()'s
//   permission check, the spend caps and the audit apply to it as to anyone with that role.
// - of an SSO person of the team (not its owner), only until their last SSO sign-in + the team's
//   session maximum (./sso-bound.ts): past it, 401 sso_reauth_required, until they sign in again.
// Every other failure is the same 401 invalid_token (which one is not said to the sender), and
// counts against the client address like a failed sign-in. sso_reauth_required is said, and not
// counted: only a right token reaches it, and its holder must learn how to renew it.

/** Failed token lookups per client address, as sign-in's per-IP limit. */
export const TOKEN_FAILURE_LIMIT = { limit: 30, windowMs: 15 * 60_000 };
/** last_used_at and last_used_ip are written at most this often per token. */
export const LAST_USED_INTERVAL_MS = 60_000;

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** The bearer token a request carries, or null when it carries none (any other scheme counts as none). */
export function bearerOf(req: Request): string | null {
  const header = req.headers.get("authorization");
  if (!header) return null;
  return BEARER.exec(header)?.[1] ?? null;
}

/** What audit rows name a token request's credential: "token:<name> (<id>)" (names may repeat). */
export function tokenCredential(token: { id: string; name: string }): string {
  return `token:${token.name} (${token.id})`;
}

/**
 * 403 token_team_mismatch, with whose token it was: raised before route() has a principal, so the
 * refusal is audited with the token's user and team from here (route.ts).
 */
export class TokenTeamMismatchError extends AppError {
  constructor(
    detail: string,
    readonly holder: { userId: string; teamId: string; credential: string },
  ) {
    super("token_team_mismatch", detail);
  }
}

/** The principal, team and token of a request made with an API token. */
export interface TokenPrincipal {
  current: CurrentUser;
  team: ActingTeam;
}

const INVALID =
  "This API token is not valid: it is mistyped, revoked or expired, or its owner no longer has access. Make a new one in Settings → API tokens.";

/**
 * Resolves `token` for `req`, or throws: 401 invalid_token (after counting the failure against
 * `ip`; past the limit 429 rate_limited), 401 sso_reauth_required, 403 token_team_mismatch. Records the token's use (at most
 * once a minute) and audits its first.
 */
export async function resolveBearer(
  db: Db,
  req: Request,
  token: string,
  ip: string | null,
  opts: { now?: number; recheck?: boolean } = {},
): Promise<TokenPrincipal> {
  const now = opts.now ?? Date.now();
  const fail = async (): Promise<never> => {
    // An open stream asking again is not a new guess: not counted.
    if (opts.recheck) throw new AppError("invalid_token", INVALID);
    const limited = await hitRateLimit(db, `api-token:ip:${ip ?? "unknown"}`, { ...TOKEN_FAILURE_LIMIT, now });
    if (!limited.allowed) {
      const retryAfterSeconds = Math.max(1, Math.ceil(limited.retryAfterMs / 1000));
      throw new AppError(
        "rate_limited",
        `Too many requests with an invalid API token from this address. Try again in ${retryAfterSeconds} seconds.`,
        { retryAfterSeconds },
      );
    }
    throw new AppError(
      "invalid_token",
      token.startsWith(API_TOKEN_PREFIX) ? INVALID : `${INVALID} (Baton's tokens start with ${API_TOKEN_PREFIX}.)`,
    );
  };

  const hash = apiTokenHash(token);
  if (!hash) return fail();
  // Like a session, from the short-lived in-process memory (lib/server/session-cache.ts), which a
  // revocation, a membership or a user change in this process empties at once. Never past the
  // token's expiry or its SSO deadline: a renewing SSO sign-in is seen at the next request.
  const found = await remembered(
    "api-token",
    db,
    hash,
    () => loadToken(db, hash),
    (f) =>
      Math.min(f.row.expiresAt?.getTime() ?? Number.POSITIVE_INFINITY, f.sso?.deadline ?? Number.POSITIVE_INFINITY),
    now,
  );
  // The database found the row by its hash; the comparison that decides is constant-time.
  if (!found || !safeEqual(found.row.tokenHash, hash)) return fail();
  const { row, current, mine, sso } = found;
  if (row.expiresAt !== null && row.expiresAt.getTime() <= now) return fail();
  if (sso && sso.deadline <= now) throw new AppError("sso_reauth_required", ssoReauthDetail(sso, mine.team));

  const named = teamChoiceOf(req).slug;
  if (named && named !== mine.team.slug) {
    throw new TokenTeamMismatchError(
      `This API token belongs to the team ${mine.team.name} (${mine.team.slug}); it cannot act in another team. Leave out X-Baton-Team, or make a token in that team.`,
      { userId: row.userId, teamId: row.teamId, credential: tokenCredential(row) },
    );
  }
  const team: ActingTeam = {
    ...resolveTeamChoice(current, { slug: mine.team.slug })!,
    apiToken: { id: row.id, name: row.name, spendCapMicro: row.spendCapMicro, maxConcurrent: row.maxConcurrent },
  };

  if (!opts.recheck) await noteUse(db, row, { ip, now, teamId: row.teamId, userId: row.userId });
  return { current, team };
}

type TokenRow = NonNullable<Awaited<ReturnType<typeof findApiTokenByHash>>>;

/**
 * A live token's row and the principal it makes (see above), or null: unknown, revoked, its owner
 * disabled or no longer in its team. Expiry is checked by the caller against the request's time.
 */
async function loadToken(
  db: Db,
  hash: string,
): Promise<{ row: TokenRow; current: CurrentUser; mine: { team: Team }; sso: SsoTokenBound | null } | null> {
  const row = await findApiTokenByHash(db, hash);
  if (!row) return null;
  const made = await tokenPrincipal(db, row);
  return made ? { row, ...made } : null;
}

/**
 * The principal a live token makes (see above), or null: revoked, its owner disabled or no longer in
 * its team. Also what a signed file link made by the token acts as (./signed-link.ts). `sso`: until
 * when SSO lets it work (the caller compares with the request's time), null when SSO does not bind it.
 */
export async function tokenPrincipal<R extends ApiToken>(
  db: Db,
  row: R,
): Promise<{ current: CurrentUser; mine: { team: Team }; sso: SsoTokenBound | null } | null> {
  if (row.revokedAt !== null) return null;
  const [user, memberships, connections] = await Promise.all([
    findUserById(db, row.userId),
    listMembershipsForUser(db, row.userId),
    listConnections(db, row.userId),
  ]);
  const mine = memberships.find((m) => m.team.id === row.teamId);
  // A write token whose owner is now a viewer is revoked by the role change (lib/server/access.ts);
  // should one survive (a change made outside Baton's paths), it still acts only as a viewer.
  if (!user || user.disabledAt !== null || !mine) return null;
  const sso = await ssoTokenBound(db, row.teamId, user, mine.membership.role);
  // The principal as route() sees it: a member of the token's team only, with the narrowed role,
  // and only connections bound to that team (one made without a team only if it is the user's one team).
  const single = memberships.length === 1;
  const current: CurrentUser = {
    user,
    session: null,
    via: { kind: "token", tokenId: row.id, tokenName: row.name, scope: row.scope },
    memberships: [
      { team: mine.team, membership: { ...mine.membership, role: effectiveRole(mine.membership.role, row.scope) } },
    ],
    connections: connections.filter((c) => c.teamId === row.teamId || (c.teamId === null && single)),
  };
  return { current, mine, sso };
}

/** When this process last wrote each token's use: the remembered row's last_used_at lags behind it. */
const lastWritten = new Map<string, number>();

/** Records a token's use (at most once a minute per token) and audits its first. */
export async function noteUse(
  db: Db,
  row: { id: string; name: string; scope: string; lastUsedAt: Date | null },
  at: { ip: string | null; now: number; teamId: string; userId: string },
): Promise<void> {
  const written = lastWritten.get(row.id);
  if (written !== undefined && at.now - written < LAST_USED_INTERVAL_MS) return;
  const lastUsedAt =
    written !== undefined && (row.lastUsedAt === null || written > row.lastUsedAt.getTime())
      ? new Date(written)
      : row.lastUsedAt;
  try {
    const touched = await touchApiToken(db, {
      id: row.id,
      lastUsedAt,
      ip: at.ip,
      now: at.now,
      minIntervalMs: LAST_USED_INTERVAL_MS,
    });
    if (touched !== "skipped") {
      if (lastWritten.size >= 10_000) lastWritten.delete(lastWritten.keys().next().value!);
      lastWritten.set(row.id, at.now);
    }
    if (touched !== "first") return;
    await recordAudit(db, {
      action: "api_token.first_use",
      teamId: at.teamId,
      userId: at.userId,
      credential: tokenCredential(row),
      targetType: "api_token",
      targetId: row.id,
      data: { name: row.name, scope: row.scope },
      ip: at.ip,
      now: at.now,
    });
  } catch (err) {
    // Bookkeeping: a failed write must not fail the request it describes.
    console.error("[baton] could not record an API token's use:", err);
  }
}
