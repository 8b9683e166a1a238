import { hashPassword } from "../../lib/server/crypto";
import { closeDb, getMigratedDb } from "../../lib/server/db/index";
import { createTeamWithOwner, slugify } from "../../lib/server/db/teams";
import { createUser } from "../../lib/server/db/users";

/**
 * Another user, who owns a team of their own (or, without TEAM, belongs to none), written into the
 * console's database with the console's own repositories (the team pages that will invite people
 * do not exist yet). Run in the console's environment (BATON_DATA_DIR, DATABASE_URL) under the
 * react-server condition, where `server-only` is the empty module it is inside Next:
 *   node --conditions=react-server --import tsx e2e/seed/add-team-user.ts EMAIL PASSWORD [TEAM]
 */
const [email, password, teamName] = process.argv.slice(2);
if (!email || !password) {
  console.error("usage: add-team-user.ts EMAIL PASSWORD [TEAM]");
  process.exit(2);
}
const db = await getMigratedDb();
try {
  const user = await createUser(db, { email, name: teamName ?? "No team", passwordHash: await hashPassword(password) });
  const team = teamName
    ? (await createTeamWithOwner(db, { name: teamName, slug: slugify(teamName), ownerId: user.id })).team
    : null;
  console.log(JSON.stringify({ userId: user.id, teamId: team?.id ?? null }));
} finally {
  await closeDb();
}
