import { loadConfig } from "../config.js";
import { DEFAULT_ACCOUNT_NAME, openDb } from "../store/db.js";
import { listTokens, mintToken, parseScopes, revokeToken } from "../store/tokens.js";

/**
 * `npm run engine:token -- --scopes sandboxes:read,sandboxes:write [--account NAME] [--label name] [--expires-in SECONDS]`
 *   mints a token of an account (made on first use; default "default") into the engine's store and
 *   prints it as the last line (shown once; only its hash is kept).
 * `npm run engine:token -- --revoke tok_…`   revokes one: the next request with it is 401.
 * `npm run engine:token -- --list [--account NAME]`   lists tokens (never their values).
 */
function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  if (i >= 0) return process.argv[i + 1];
  const eq = process.argv.find((a) => a.startsWith(`--${name}=`));
  return eq?.slice(name.length + 3);
}
const flag = (name: string) => process.argv.includes(`--${name}`);

try {
  const config = loadConfig();
  const db = openDb(config.root);
  try {
    const revoke = arg("revoke");
    if (revoke) {
      if (!revokeToken(db, revoke)) throw new Error(`no token ${revoke} in ${config.root}`);
      console.error(`revoked ${revoke}`);
    } else if (flag("list")) {
      for (const t of listTokens(db, { account: arg("account") })) {
        const state = t.revoked_at
          ? "revoked"
          : t.expires_at !== null && t.expires_at <= Date.now()
            ? "expired"
            : "active";
        console.log([t.id, t.account.name, t.hint, t.scopes.join(","), state, t.label ?? ""].join("\t"));
      }
    } else {
      const scopes = parseScopes(arg("scopes") ?? "sandboxes:read,sandboxes:write");
      const expiresIn = arg("expires-in");
      if (expiresIn !== undefined && !/^[1-9]\d{0,9}$/.test(expiresIn))
        throw new Error(`--expires-in takes whole seconds, not "${expiresIn}"`);
      const expiresAt = expiresIn === undefined ? null : Date.now() + Number(expiresIn) * 1000;
      const { token, record } = mintToken(db, scopes, {
        label: arg("label"),
        account: arg("account") ?? DEFAULT_ACCOUNT_NAME,
        expiresAt,
      });
      const until = expiresAt === null ? "" : `, expires ${new Date(expiresAt).toISOString()}`;
      console.error(
        `minted ${record.id} for account "${record.account.name}" with scopes ${scopes.join(", ")}${until} in ${config.root} (shown once; only its SHA-256 is stored)`,
      );
      console.log(token);
    }
  } finally {
    db.close();
  }
} catch (e) {
  console.error(`engine:token: ${(e as Error).message}`);
  process.exit(2);
}
