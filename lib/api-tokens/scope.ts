// A token's scope, and what it leaves of its owner's role (issue 23). Client-safe: the settings page
// offers the same choices the server allows.
//
// - "read": reads everything the owner's role reads, changes nothing: a viewer's permissions.
// - "write": the owner's role, but never more than a member's: sandboxes and their resources, never
//   the team's settings, members, billing or audit log (those stay with a signed-in person).
// So a token's effective role is min(the owner's role in the team, the scope's ceiling), computed
// on every request from the role the owner has now.

export const TOKEN_SCOPES = ["read", "write"] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

type TeamRole = "owner" | "admin" | "member" | "viewer";
const RANK: Record<TeamRole, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };
const CEILING: Record<TokenScope, TeamRole> = { read: "viewer", write: "member" };

export const SCOPE_LABELS: Record<TokenScope, string> = { read: "Read", write: "Read and write" };

/** The role a request with this token acts with: the lower of the owner's role and the scope's ceiling. */
export function effectiveRole(role: TeamRole, scope: TokenScope): TeamRole {
  const ceiling = CEILING[scope];
  return RANK[role] <= RANK[ceiling] ? role : ceiling;
}

/** Whether a role may hold a token of this scope: "write" needs a role that can change something. */
export function scopeAllowed(role: TeamRole, scope: TokenScope): boolean {
  return scope === "read" || RANK[role] >= RANK.member;
}

/** The scopes a role may choose from when making a token. */
export function scopesFor(role: TeamRole): TokenScope[] {
  return TOKEN_SCOPES.filter((s) => scopeAllowed(role, s));
}

/** Whether a role may make a token that never expires: admins and owners. */
export function mayMakeNonExpiring(role: TeamRole): boolean {
  return RANK[role] >= RANK.admin;
}

/** Whether a role may see and revoke every token of the team (not only their own). */
export function managesTeamTokens(role: TeamRole): boolean {
  return RANK[role] >= RANK.admin;
}

/** Expiry choices in days; null is "never" (admins only). The default is 90. */
export const EXPIRY_DAYS = [7, 30, 90, 365, null] as const;
export const DEFAULT_EXPIRY_DAYS = 90;
export const MAX_TOKEN_NAME = 80;

/** A token's own limit of concurrent sandboxes (lib/server/api-tokens/limits.ts). */
export const TOKEN_CONCURRENCY = { min: 1, max: 100 } as const;
/** A token's own monthly spend cap: whole cents (as the spend caps), from EUR 0.01 up to EUR 1,000,000. */
export const TOKEN_CAP_MICRO = { min: 10_000, max: 1_000_000 * 1_000_000, step: 10_000 } as const;
