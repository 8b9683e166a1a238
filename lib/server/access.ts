import "server-only";
import { getMigratedDb, type Db } from "./db/index";
import { removeMember } from "./db/teams";
import { deleteUser, setUserDisabled } from "./db/users";
import { revokeEngineAccess } from "./tokens";

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
