import "server-only";
import { getMigratedDb, type Db } from "./db/index";
import { getMembership, removeMember, setMemberRole, type Membership, type Role } from "./db/teams";
import { DbNotFoundError } from "./db/errors";
import { deleteUser, setUserDisabled } from "./db/users";
import { engineScopesFor } from "./rbac";
import { revokeTokensBeyondRole, revokeTokensOfUser } from "./api-tokens/manage";
import { rescopeEngineAccess, revokeEngineAccess } from "./tokens";

// Taking someone's access away, in one place: the console's own rows change, the local-engine
// tokens their connections hold are revoked on the engine at once, so the team's sandboxes are out
// of their reach even through a token copied out before, and so are their personal API tokens
// (lib/server/api-tokens/manage.ts) that the change leaves without the access they need. The team and user pages call these,
// never the repository functions directly.

interface Options {
  db?: Db;
}

const dbOf = (opts: Options): Promise<Db> => (opts.db ? Promise.resolve(opts.db) : getMigratedDb());

/**
 * Removes a member from a team (refused for the last owner), or records that they left it, and
 * revokes their engine tokens and API tokens of that team.
 */
export async function removeTeamMember(
  input: { teamId: string; userId: string; left?: boolean },
  opts: Options = {},
): Promise<{ revoked: number; apiTokensRevoked: number }> {
  const db = await dbOf(opts);
  await removeMember(db, input);
  const revoked = await revokeEngineAccess(input.userId, { db, teamId: input.teamId });
  const apiTokensRevoked = await revokeTokensOfUser(db, {
    userId: input.userId,
    teamId: input.teamId,
    reason: input.left ? "member_left" : "member_removed",
  });
  return { revoked, apiTokensRevoked };
}

/**
 * Changes a member's role (refused for the last owner; only owners may make owners, checked by the
 * caller). When the local-engine scopes the role needs change (rbac.ts engineScopesFor), the
 * member's engine tokens of that team are replaced by tokens with the new role's scopes and the old
 * ones revoked: narrowed to viewer, the write token they held stops working at once. Their open
 * terminals and streams notice the new role themselves (lib/server/access-watch.ts).
 */
export async function changeMemberRole(
  input: { teamId: string; userId: string; role: Role },
  opts: Options = {},
): Promise<{ membership: Membership; revoked: number }> {
  const db = await dbOf(opts);
  const before = await getMembership(db, input.teamId, input.userId);
  if (!before) throw new DbNotFoundError("membership");
  const membership = await setMemberRole(db, input);
  // API tokens the new role cannot hold (a write token of a viewer, a never-expiring one of a member).
  await revokeTokensBeyondRole(db, { userId: input.userId, teamId: input.teamId, role: membership.role });
  const was = engineScopesFor(before.role).join(",");
  const now = engineScopesFor(membership.role).join(",");
  if (was === now) return { membership, revoked: 0 };
  return {
    membership,
    revoked: await rescopeEngineAccess(input.userId, { db, teamId: input.teamId, role: membership.role }),
  };
}

/** Disables a user (their sessions stop at once) and revokes every engine token and API token they hold. */
export async function disableUser(userId: string, opts: Options = {}): Promise<{ revoked: number }> {
  const db = await dbOf(opts);
  await setUserDisabled(db, userId, true);
  await revokeTokensOfUser(db, { userId, reason: "account_disabled" });
  return { revoked: await revokeEngineAccess(userId, { db }) };
}

/** A member is disabled in one team (lib/server/members.ts): their API tokens of that team are revoked. */
export async function revokeApiTokensOfDisabledMember(input: { teamId: string; userId: string }, opts: Options = {}) {
  return revokeTokensOfUser(await dbOf(opts), { ...input, reason: "member_disabled" });
}

/** Deletes a user; their engine tokens are revoked first (their connection rows go with the user). */
export async function deleteUserAccount(userId: string, opts: Options = {}): Promise<boolean> {
  const db = await dbOf(opts);
  await revokeEngineAccess(userId, { db });
  return deleteUser(db, userId);
}
