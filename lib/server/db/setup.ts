import "server-only";
import { DbConflictError, isUniqueViolation } from "./errors";
import { inTransaction } from "./util";
import type { Db } from "./index";
import { getSetting } from "./settings";
import { INSTANCE_OWNER_KEY } from "./sso";
import { createTeamWithOwner, type Membership, type Team } from "./teams";
import { countUsers, createUser, type User } from "./users";

// First run: while no user exists, the first visitor creates the owner account and the first team.
// The "setup.completed_at" setting is inserted first inside the transaction; its primary key makes a
// second, concurrent setup fail instead of creating a second owner.

export const SETUP_KEY = "setup.completed_at";

export async function isFirstRun(db: Db): Promise<boolean> {
  if ((await getSetting(db, SETUP_KEY)) !== null) return false;
  return (await countUsers(db)) === 0;
}

export async function createFirstOwner(
  db: Db,
  input: { email: string; name?: string; passwordHash: string; teamName: string; teamSlug: string; now?: number },
): Promise<{ user: User; team: Team; membership: Membership }> {
  const now = input.now ?? Date.now();
  try {
    return await inTransaction(db, async (trx) => {
      await trx
        .insertInto("settings")
        .values({ key: SETUP_KEY, value: String(now) })
        .execute();
      if ((await countUsers(trx)) > 0) throw new DbConflictError("setup_done", "Baton is already set up");
      const user = await createUser(trx, {
        email: input.email,
        name: input.name,
        passwordHash: input.passwordHash,
        now,
      });
      const { team, membership } = await createTeamWithOwner(trx, {
        name: input.teamName,
        slug: input.teamSlug,
        ownerId: user.id,
        now,
      });
      // The instance owner (lib/server/db/sso.ts): approves SSO email domains for every team.
      await trx.insertInto("settings").values({ key: INSTANCE_OWNER_KEY, value: user.id }).execute();
      return { user, team, membership };
    });
  } catch (err) {
    if (isUniqueViolation(err, { index: "settings_pkey", column: "settings.key" })) {
      throw new DbConflictError("setup_done", "Baton is already set up", { cause: err });
    }
    throw err;
  }
}
