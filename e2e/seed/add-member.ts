import { hashPassword } from "../../lib/server/crypto";
import { closeDb, getMigratedDb } from "../../lib/server/db/index";
import { addMember, listMembershipsForUser, type Role } from "../../lib/server/db/teams";
import { createUser, findUserByEmail } from "../../lib/server/db/users";
import { connectLocalEngine } from "../../lib/server/tokens";

/**
 * A user who joins the team of OWNER_EMAIL with ROLE, connected to the local engine in that team's
 * account, written with the console's own repositories (run as add-team-user.ts is). A viewer
 * cannot connect an engine from the console (connections.manage): an admin's invitation flow will
 * hand them one; until then a test makes it here.
 *   node --conditions=react-server --import tsx e2e/seed/add-member.ts EMAIL PASSWORD OWNER_EMAIL ROLE
 */
const [email, password, ownerEmail, role] = process.argv.slice(2);
if (!email || !password || !ownerEmail || !role) {
  console.error("usage: add-member.ts EMAIL PASSWORD OWNER_EMAIL ROLE");
  process.exit(2);
}
const db = await getMigratedDb();
try {
  const owner = await findUserByEmail(db, ownerEmail);
  const team = owner && (await listMembershipsForUser(db, owner.id))[0];
  if (!team) throw new Error(`${ownerEmail} has no team`);
  const user = await createUser(db, { email, name: role, passwordHash: await hashPassword(password) });
  await addMember(db, { teamId: team.team.id, userId: user.id, role: role as Role });
  await connectLocalEngine(user.id, { db, teamId: team.team.id, label: email });
  console.log(JSON.stringify({ userId: user.id, teamId: team.team.id }));
} finally {
  await closeDb();
}
