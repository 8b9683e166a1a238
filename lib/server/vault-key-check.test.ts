import "server-only";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { closeDb, getMigratedDb, migrateToLatest } from "./db/index";
import { testBackends, type TestDatabase } from "./db/test-backends";
import { resetEnvForTests } from "./env";
import { describeError } from "./errors";
import { stopHousekeeping } from "./housekeeping";
import { checkVaultKey, VAULT_KEY_SETTING, VaultKeyMismatchError, vaultKeyId } from "./vault-key-check";

const KEY_A = Buffer.alloc(32, 1);
const KEY_B = Buffer.alloc(32, 2);

describe.each(testBackends)("the vault key check on $name", (backend) => {
  let t: TestDatabase;
  beforeEach(async () => {
    t = await backend.open();
    await migrateToLatest(t.db);
  });
  afterEach(async () => t.close());

  it("the first instance records its key's identifier; the same key passes, another is refused", async () => {
    await checkVaultKey(t.db, KEY_A);
    const row = await t.db
      .selectFrom("settings")
      .select("value")
      .where("key", "=", VAULT_KEY_SETTING)
      .executeTakeFirst();
    expect(row?.value).toBe(vaultKeyId(KEY_A));
    expect(row?.value).not.toContain(KEY_A.toString("hex").slice(0, 8)); // an identifier, not the key
    await checkVaultKey(t.db, KEY_A);
    await expect(checkVaultKey(t.db, KEY_B)).rejects.toBeInstanceOf(VaultKeyMismatchError);
  });

  it("two instances with different keys starting at once on an empty database: exactly one is accepted", async () => {
    const results = await Promise.allSettled([checkVaultKey(t.db, KEY_A), checkVaultKey(t.db, KEY_B)]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(results.filter((r) => r.status === "rejected").map((r) => (r as PromiseRejectedResult).reason)).toEqual([
      expect.any(VaultKeyMismatchError),
    ]);
  });

  it("deleting the row (a key lost for good) lets the new key be adopted", async () => {
    await checkVaultKey(t.db, KEY_A);
    await t.db.deleteFrom("settings").where("key", "=", VAULT_KEY_SETTING).execute();
    await checkVaultKey(t.db, KEY_B);
    await expect(checkVaultKey(t.db, KEY_A)).rejects.toBeInstanceOf(VaultKeyMismatchError);
  });
});

describe.each(testBackends)("a second instance on the same database ($name)", (backend) => {
  let t: TestDatabase;
  const dirs: string[] = [];
  /** Plays one console process: its own data dir, and BATON_SECRET when given. */
  const startInstance = async (secret: string | undefined) => {
    stopHousekeeping();
    await closeDb();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-vault-check-"));
    dirs.push(dataDir);
    vi.stubEnv("BATON_DATA_DIR", dataDir);
    vi.stubEnv("BATON_SECRET", secret ?? "");
    vi.stubEnv("DATABASE_URL", t.url);
    resetEnvForTests();
    return getMigratedDb();
  };

  beforeAll(async () => {
    t = await backend.open();
  });
  afterAll(async () => {
    stopHousekeeping();
    await closeDb();
    vi.unstubAllEnvs();
    resetEnvForTests();
    await t.close();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("with the same BATON_SECRET it serves; with its own generated secret.key it refuses with a 503 that says why", async () => {
    await startInstance("s".repeat(48));
    await startInstance("s".repeat(48)); // the second instance, same secret: fine
    // Without BATON_SECRET, the instance generates a key into its own data dir: not the database's.
    const refused = await startInstance(undefined).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(VaultKeyMismatchError);
    const described = describeError(refused);
    expect(described.status).toBe(503);
    expect(described.body).toEqual({ code: "vault_key_mismatch", detail: expect.stringContaining("BATON_SECRET") });
  });
});
