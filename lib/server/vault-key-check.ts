import "server-only";
import { createHmac } from "node:crypto";
import type { Db } from "./db/index";
import { getVaultKey } from "./crypto";
import { UserFacingError } from "./user-error";

// Several Baton instances on one database must share one vault key: it encrypts the stored engine
// tokens and (through HKDF, lib/server/session-cookie.ts) the session cookies. The key comes from
// BATON_SECRET, or else from a secret.key generated into each instance's own data dir, so a second
// instance started without BATON_SECRET would have a key of its own: it could decrypt no token
// (500s) and would take every session cookie for a forgery (random sign-outs). Instead, the
// database remembers an identifier of the key it was first used with, and an instance with another
// key refuses to serve, saying why.

/** The settings row holding the identifier of the database's vault key. */
export const VAULT_KEY_SETTING = "vault.key_id";

/** An identifier of the key that says nothing about it (HMAC of a fixed label): 128 bits, hex. */
export function vaultKeyId(key: Buffer): string {
  return createHmac("sha256", key).update("baton/vault/key-id/v1").digest("hex").slice(0, 32);
}

/** This instance's vault key is not the database's. */
export class VaultKeyMismatchError extends UserFacingError<"vault_key_mismatch"> {
  override name = "VaultKeyMismatchError";
  readonly status = 503;
  constructor() {
    super(
      "vault_key_mismatch",
      "This Baton instance has a different vault key than the one its database was set up with, so it can read " +
        "neither sessions nor stored engine tokens. Give every instance the same BATON_SECRET. If the old key is " +
        `lost for good, delete the settings row "${VAULT_KEY_SETTING}" to adopt the new one (stored tokens must ` +
        "then be entered again).",
    );
  }
}

/**
 * Records the vault key's identifier in a database that has none (first start, or one made before
 * this check), else compares: throws VaultKeyMismatchError when it differs. One insert-or-nothing
 * and one read, once per process (lib/server/db/index.ts getMigratedDb()).
 */
export async function checkVaultKey(db: Db, key: Buffer = getVaultKey()): Promise<void> {
  const id = vaultKeyId(key);
  await db
    .insertInto("settings")
    .values({ key: VAULT_KEY_SETTING, value: id })
    .onConflict((oc) => oc.column("key").doNothing())
    .execute();
  const row = await db
    .selectFrom("settings")
    .select("value")
    .where("key", "=", VAULT_KEY_SETTING)
    .executeTakeFirstOrThrow();
  if (row.value !== id) throw new VaultKeyMismatchError();
}
