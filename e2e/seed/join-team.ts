import { closeDb, getMigratedDb } from "../../lib/server/db/index";
import { addMember, listMembershipsForUser, type Role } from "../../lib/server/db/teams";
import { findUserByEmail } from "../../lib/server/db/users";
import { connectLocalEngine } from "../../lib/server/tokens";

/**
 * An existing user (EMAIL) joins the team of OWNER_EMAIL with ROLE and is connected to the local
 * engine in that team's account (the connection becomes their active one), written with the
 * console's own repositories (run as add-team-user.ts is):
 *   node --conditions=react-server --import tsx e2e/seed/join-team.ts EMAIL OWNER_EMAIL ROLE
 */
const [email, ownerEmail, role] = process.argv.slice(2);
if (!email || !ownerEmail || !role) {
  console.error("usage: join-team.ts EMAIL OWNER_EMAIL ROLE");
  process.exit(2);
}
const db = await getMigratedDb();
try {
  const user = await findUserByEmail(db, email);
  const owner = await findUserByEmail(db, ownerEmail);
  const team = owner && (await listMembershipsForUser(db, owner.id))[0];
  if (!user || !team) throw new Error(`${email} or ${ownerEmail}'s team not found`);
  await addMember(db, { teamId: team.team.id, userId: user.id, role: role as Role });
  await connectLocalEngine(user.id, { db, teamId: team.team.id, label: email });
  console.log(JSON.stringify({ userId: user.id, teamId: team.team.id }));
} finally {
  await closeDb();
}
