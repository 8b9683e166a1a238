import { decrypt } from "../../lib/server/crypto";
import { getActiveConnection, getConnectionSecret } from "../../lib/server/db/connections";
import { closeDb, getMigratedDb } from "../../lib/server/db/index";
import { findUserByEmail } from "../../lib/server/db/users";

/**
 * The plaintext token of EMAIL's active connection (a local-engine token), read from the console's
 * vault as someone who copied it out before losing access would have it. Prints `{token}`.
 *   node --conditions=react-server --import tsx e2e/seed/engine-token-of.ts EMAIL
 */
const [email] = process.argv.slice(2);
if (!email) {
  console.error("usage: engine-token-of.ts EMAIL");
  process.exit(2);
}
const db = await getMigratedDb();
try {
  const user = await findUserByEmail(db, email);
  if (!user) throw new Error(`no user ${email}`);
  const conn = await getActiveConnection(db, user.id);
  if (!conn) throw new Error(`${email} has no active connection`);
  const secret = await getConnectionSecret(db, user.id, conn.id);
  if (!secret) throw new Error(`${email}'s connection has no token`);
  console.log(JSON.stringify({ token: decrypt(secret.ciphertext, { aad: secret.aad }) }));
} finally {
  await closeDb();
}
