import "server-only";
import { getMigratedDb, type Db } from "./db/index";
import { getMembership, removeMember, setMemberRole, type Membership, type Role } from "./db/teams";
import { DbNotFoundError } from "./db/errors";
import { deleteUser, setUserDisabled } from "./db/users";
import { engineScopesFor } from "./rbac";
import { rescopeEngineAccess, revokeEngineAccess } from "./tokens";

// Taking someone's access away, in one place: the console's own rows change, and the local-engine
// tokens their connections hold are revoked on the engine at once, so the team's sandboxes are out
// of their reach even through a token copied out before. The team and user pages call these,
// never the repository functions directly.

interface Options {
  db?: Db;
}

const dbOf = (opts: Options): Promise<Db> => (opts.db ? Promise.resolve(opts.db) : getMigratedDb());

/** Removes a member from a team (refused for the last owner) and revokes their engine tokens of that team. */
export async function removeTeamMember(
  input: { teamId: string; userId: string },
  opts: Options = {},
): Promise<{ revoked: number }> {
  const db = await dbOf(opts);
  await removeMember(db, input);
  return { revoked: await revokeEngineAccess(input.userId, { db, teamId: input.teamId }) };
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
  const was = engineScopesFor(before.role).join(",");
  const now = engineScopesFor(membership.role).join(",");
  if (was === now) return { membership, revoked: 0 };
  return {
    membership,
    revoked: await rescopeEngineAccess(input.userId, { db, teamId: input.teamId, role: membership.role }),
  };
}

/** Disables a user (their sessions stop at once) and revokes every engine token they hold. */
export async function disableUser(userId: string, opts: Options = {}): Promise<{ revoked: number }> {
  const db = await dbOf(opts);
  await setUserDisabled(db, userId, true);
  return { revoked: await revokeEngineAccess(userId, { db }) };
}

/** Deletes a user; their engine tokens are revoked first (their connection rows go with the user). */
export async function deleteUserAccount(userId: string, opts: Options = {}): Promise<boolean> {
  const db = await dbOf(opts);
  await revokeEngineAccess(userId, { db });
  return deleteUser(db, userId);
}
