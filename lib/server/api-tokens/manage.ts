import "server-only";
import {
  DEFAULT_EXPIRY_DAYS,
  managesTeamTokens,
  mayMakeNonExpiring,
  scopeAllowed,
  scopesFor,
  type TokenScope,
} from "../../api-tokens/scope";
import type { ApiTokenDto, ApiTokensView } from "../../validations/api-tokens";
import type { ActingTeam } from "../acting-team";
import {
  getApiToken,
  insertApiToken,
  listApiTokens,
  revokeApiToken,
  revokeApiTokensOf,
  type ApiToken,
  type ApiTokenWithOwner,
} from "../db/api-tokens";
import { recordAudit } from "../db/audit";
import type { Db } from "../db/index";
import type { Role } from "../db/teams";
import { AppError } from "../errors";
import { newApiToken } from "./format";
import { ssoTokenBound } from "./sso-bound";

// Making, listing and revoking personal API tokens (issue 23), for the signed-in member of the
// acting team (app/api/tokens: cookie-only, so a token never makes or revokes a token), and the
// revocations Baton makes by itself when the owner's access changes (lib/server/access.ts).

const DAY_MS = 24 * 60 * 60 * 1000;
/** Live tokens one member may hold in one team: enough for every agent and CI job, not a flood. */
export const MAX_LIVE_TOKENS = 50;

export function toApiTokenDto(t: ApiTokenWithOwner, viewerId: string): ApiTokenDto {
  return {
    id: t.id,
    name: t.name,
    hint: t.hint,
    scope: t.scope,
    created_at: t.createdAt.toISOString(),
    expires_at: t.expiresAt?.toISOString() ?? null,
    last_used_at: t.lastUsedAt?.toISOString() ?? null,
    last_used_ip: t.lastUsedIp,
    revoked_at: t.revokedAt?.toISOString() ?? null,
    revoked_reason: t.revokedReason,
    spend_cap_micro: t.spendCapMicro,
    max_concurrent_sandboxes: t.maxConcurrent,
    owner: t.owner,
    mine: t.userId === viewerId,
  };
}

/**
 * The tokens the member (`user`, signed in to `team`) sees: their own, or the whole team's for
 * admins and owners; and whether SSO limits their own (./sso-bound.ts).
 */
export async function apiTokensView(
  db: Db,
  team: ActingTeam,
  user: { id: string; email: string },
): Promise<ApiTokensView> {
  const all = managesTeamTokens(team.role);
  const [tokens, sso] = await Promise.all([
    listApiTokens(db, { teamId: team.team.id, userId: all ? undefined : team.userId }),
    ssoTokenBound(db, team.team.id, user, team.role),
  ]);
  return {
    tokens: tokens.map((t) => toApiTokenDto(t, team.userId)),
    manages_all: all,
    scopes: scopesFor(team.role),
    may_never_expire: mayMakeNonExpiring(team.role),
    sso_session_max_hours: sso?.sessionMaxHours ?? null,
  };
}

/** Makes a token for the member in the acting team; the token itself is in this answer only. */
export async function createApiToken(
  db: Db,
  team: ActingTeam,
  input: {
    name: string;
    scope: TokenScope;
    expiresInDays?: number | null;
    spendCapMicro?: number | null;
    maxConcurrent?: number | null;
  },
  now = Date.now(),
): Promise<{ token: string; apiToken: ApiToken }> {
  if (!scopeAllowed(team.role, input.scope)) {
    throw new AppError(
      "forbidden",
      `Your role in ${team.team.name} (${team.role}) changes nothing, so your tokens can only read. Choose "Read".`,
    );
  }
  const days = input.expiresInDays === undefined ? DEFAULT_EXPIRY_DAYS : input.expiresInDays;
  if (days === null && !mayMakeNonExpiring(team.role)) {
    throw new AppError(
      "forbidden",
      `Only admins and owners may make a token that never expires; your role in ${team.team.name} is ${team.role}.`,
    );
  }
  const live = (await listApiTokens(db, { teamId: team.team.id, userId: team.userId, limit: 1000 })).filter(
    (t) => t.revokedAt === null && (t.expiresAt === null || t.expiresAt.getTime() > now),
  );
  if (live.length >= MAX_LIVE_TOKENS) {
    throw new AppError(
      "token_limit",
      `You already have ${MAX_LIVE_TOKENS} live tokens in ${team.team.name}. Revoke one you no longer use first.`,
    );
  }
  const made = newApiToken();
  const apiToken = await insertApiToken(db, {
    teamId: team.team.id,
    userId: team.userId,
    name: input.name,
    hash: made.hash,
    hint: made.hint,
    scope: input.scope,
    expiresAt: days === null ? null : now + days * DAY_MS,
    spendCapMicro: input.spendCapMicro ?? null,
    maxConcurrent: input.maxConcurrent ?? null,
    now,
  });
  return { token: made.token, apiToken };
}

/**
 * Revokes a token of the acting team: one's own, or any for admins and owners. Another member's
 * token is 404 to a member (as if it did not exist). Revoking a revoked token changes nothing.
 */
export async function revokeTeamApiToken(
  db: Db,
  team: ActingTeam,
  id: string,
  now = Date.now(),
): Promise<{ token: ApiToken; revoked: boolean }> {
  const token = await getApiToken(db, team.team.id, id);
  if (!token || (token.userId !== team.userId && !managesTeamTokens(team.role))) {
    throw new AppError("not_found", "There is no such API token in this team.");
  }
  const revoked = await revokeApiToken(db, { id, teamId: team.team.id, by: team.userId, reason: "revoked", now });
  return { token, revoked };
}

export type RevocationReason =
  "member_removed" | "member_left" | "member_disabled" | "account_disabled" | "role_changed";

async function auditRevocations(
  db: Db,
  revoked: Array<{ id: string; teamId: string; name: string }>,
  userId: string,
  reason: RevocationReason,
): Promise<number> {
  for (const t of revoked) {
    try {
      await recordAudit(db, {
        action: "api_token.revoke",
        teamId: t.teamId,
        userId: null,
        credential: "baton",
        targetType: "api_token",
        targetId: t.id,
        data: { name: t.name, owner: userId, reason },
      });
    } catch (err) {
      console.error("[baton] could not record an API token's revocation:", err);
    }
  }
  return revoked.length;
}

/** The user's tokens of one team (or of every team without `teamId`) are revoked: they left, were removed or disabled. */
export async function revokeTokensOfUser(
  db: Db,
  input: { userId: string; teamId?: string; reason: RevocationReason },
): Promise<number> {
  const revoked = await revokeApiTokensOf(db, { userId: input.userId, teamId: input.teamId, reason: input.reason });
  return auditRevocations(db, revoked, input.userId, input.reason);
}

/**
 * The member's role in the team is now `role`: their tokens that need more are revoked: write
 * tokens when the role changes nothing (viewer), and tokens that never expire when they are no
 * longer an admin or owner (only those may make them).
 */
export async function revokeTokensBeyondRole(
  db: Db,
  input: { userId: string; teamId: string; role: Role },
): Promise<number> {
  const revoked = [
    ...(scopeAllowed(input.role, "write")
      ? []
      : await revokeApiTokensOf(db, { ...input, scope: "write", reason: "role_changed" })),
    ...(mayMakeNonExpiring(input.role)
      ? []
      : await revokeApiTokensOf(db, { ...input, neverExpiring: true, reason: "role_changed" })),
  ];
  return auditRevocations(db, revoked, input.userId, "role_changed");
}
