import { hashPassword } from "../../lib/server/crypto.js";
import { closeDb, getMigratedDb } from "../../lib/server/db/index.js";
import { createTeamWithOwner, slugify } from "../../lib/server/db/teams.js";
import { createUser } from "../../lib/server/db/users.js";

/**
 * A second user who owns a team of their own, written into the console's database with the
 * console's own repositories (the team pages that will invite people do not exist yet). Run in the
 * console's environment (BATON_DATA_DIR, DATABASE_URL) under the react-server condition, where
 * `server-only` is the empty module it is inside Next:
 *   node --conditions=react-server --import tsx e2e/seed/add-team-user.ts EMAIL PASSWORD TEAM
 */
const [email, password, teamName] = process.argv.slice(2);
if (!email || !password || !teamName) {
  console.error("usage: add-team-user.ts EMAIL PASSWORD TEAM");
  process.exit(2);
}
const db = await getMigratedDb();
try {
  const user = await createUser(db, { email, name: teamName, passwordHash: await hashPassword(password) });
  const { team } = await createTeamWithOwner(db, { name: teamName, slug: slugify(teamName), ownerId: user.id });
  console.log(JSON.stringify({ userId: user.id, teamId: team.id }));
} finally {
  await closeDb();
}
