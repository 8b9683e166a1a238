import { loadConfig } from "../config.js";
import { openDb } from "../store/db.js";
import { mintToken, parseScopes } from "../store/tokens.js";

/**
 * `npm run engine:token -- --scopes sandboxes:read,sandboxes:write [--label name]`
 * Mints a token into the engine's store and prints it as the last line (shown once; only its hash is kept).
 */
function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  if (i >= 0) return process.argv[i + 1];
  const eq = process.argv.find((a) => a.startsWith(`--${name}=`));
  return eq?.slice(name.length + 3);
}

try {
  const scopes = parseScopes(arg("scopes") ?? "sandboxes:read,sandboxes:write");
  const config = loadConfig();
  const db = openDb(config.root);
  const { token, record } = mintToken(db, scopes, arg("label"));
  db.close();
  console.error(`minted ${record.id} with scopes ${scopes.join(", ")} in ${config.root} (shown once; only its SHA-256 is stored)`);
  console.log(token);
} catch (e) {
  console.error(`engine:token: ${(e as Error).message}`);
  process.exit(2);
}
