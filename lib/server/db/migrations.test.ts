import "server-only";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { Migrator, NO_MIGRATIONS } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { resetEnvForTests } from "../env";
import { closeDb, getDb, getMigratedDb, migrateToLatest } from "./index";
import { migrationProvider, migrations } from "./migrations/index";
import { testBackends, type TestDatabase } from "./test-backends";

const TABLES = [
  "api_token_cap_alerts",
  "api_token_sandboxes",
  "api_tokens",
  "audit_events",
  "audit_outbox",
  "audit_purge_permit",
  "audit_settings",
  "invitations",
  "leases",
  "login_attempts",
  "memberships",
  "orkestr_connections",
  "pending_logins",
  "received_events",
  "sessions",
  "settings",
  "spend_alert_settings",
  "spend_cap_alerts",
  "spend_cap_state",
  "spend_caps",
  "sso_configs",
  "sso_domains",
  "sso_identities",
  "sso_transactions",
  "team_usage_settings",
  "teams",
  "usage_daily",
  "usage_meters",
  "user_recovery_codes",
  "user_totp",
  "users",
  "webhook_receivers",
];

async function tableNames(t: TestDatabase): Promise<string[]> {
  const tables = await t.db.introspection.getTables();
  return tables
    .filter((x) => x.schema === undefined || x.schema === t.location)
    .map((x) => x.name)
    .sort();
}

describe.each(testBackends)("migrations on $name", (backend) => {
  let t: TestDatabase;

  beforeAll(async () => {
    t = await backend.open();
  });
  afterAll(async () => {
    await t.close();
  });

  it("starts from an empty database", async () => {
    expect(await tableNames(t)).toEqual([]);
  });

  it("migrates from zero to the latest schema", async () => {
    expect(await migrateToLatest(t.db)).toEqual(Object.keys(migrations));
    expect(await tableNames(t)).toEqual(TABLES);
  });

  it("is idempotent: a second and a concurrent run apply nothing", async () => {
    expect(await migrateToLatest(t.db)).toEqual([]);
    const again = await Promise.all([migrateToLatest(t.db), migrateToLatest(t.db)]);
    expect(again).toEqual([[], []]);
    const rows = await sql<{ n: number | string }>`select count(*) as n from kysely_migration`.execute(t.db);
    expect(Number(rows.rows[0]?.n)).toBe(Object.keys(migrations).length);
  });

  it("migrates down to nothing and back up", async () => {
    const migrationTableSchema = backend.name === "postgres" ? t.location : undefined;
    const migrator = new Migrator({ db: t.db, provider: migrationProvider, migrationTableSchema });
    const down = await migrator.migrateTo(NO_MIGRATIONS);
    expect(down.error).toBeUndefined();
    expect(await tableNames(t)).toEqual([]);
    expect(await migrateToLatest(t.db)).toEqual(Object.keys(migrations));
    expect(await tableNames(t)).toEqual(TABLES);
  });

  it("round-trips epoch-ms timestamps beyond 2^31 as numbers", async () => {
    const ms = Date.UTC(2100, 0, 1);
    await t.db.insertInto("login_attempts").values({ key: "ts", window_start: ms, count: 1 }).execute();
    const row = await t.db.selectFrom("login_attempts").selectAll().where("key", "=", "ts").executeTakeFirstOrThrow();
    expect(row.window_start).toBe(ms);
    expect(typeof row.count).toBe("number");
  });

  it("enforces foreign keys", async () => {
    await expect(
      t.db
        .insertInto("sessions")
        .values({
          id: "f".repeat(64),
          user_id: "usr_missing",
          created_at: 1,
          expires_at: 2,
          last_seen_at: 1,
          revoked_at: null,
          ip: null,
          user_agent: null,
        })
        .execute(),
    ).rejects.toThrow(/foreign key/i);
  });
});

describe.each(testBackends)("getDb() from the environment on $name", (backend) => {
  let t: TestDatabase;
  let dataDir: string;

  beforeAll(async () => {
    t = await backend.open();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-env-db-"));
  });
  afterEach(async () => {
    await closeDb();
    vi.unstubAllEnvs();
    resetEnvForTests();
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("opens DATABASE_URL, migrates once per process and reuses the instance", async () => {
    vi.stubEnv("BATON_DATA_DIR", dataDir);
    vi.stubEnv("DATABASE_URL", t.url);
    resetEnvForTests();
    const db = await getMigratedDb();
    expect(getDb()).toBe(db);
    expect(await getMigratedDb()).toBe(db);
    expect(await tableNames({ ...t, db })).toEqual(TABLES);
    if (backend.name === "sqlite") {
      const journal = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(db);
      expect(journal.rows[0]?.journal_mode).toBe("wal");
      const fk = await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(db);
      expect(fk.rows[0]?.foreign_keys).toBe(1);
    } else {
      const sp = await sql<{ s: string }>`select current_schema() as s`.execute(db);
      expect(sp.rows[0]?.s).toBe(t.location);
    }
  });

  it("keeps the instance when the environment is parsed again (each server bundle parses its own) and swaps it when the target changes", async () => {
    vi.stubEnv("BATON_DATA_DIR", dataDir);
    vi.stubEnv("DATABASE_URL", t.url);
    resetEnvForTests();
    const db = await getMigratedDb();
    resetEnvForTests(); // a second, equal env object: what another chunk of a production build holds
    expect(getDb()).toBe(db);
    await sql`select 1`.execute(db); // not destroyed under whoever is still using it
    vi.stubEnv("DATABASE_URL", undefined);
    resetEnvForTests();
    expect(getDb()).not.toBe(db);
  });
});

describe("getDb() default", () => {
  afterEach(async () => {
    await closeDb();
    vi.unstubAllEnvs();
    resetEnvForTests();
  });

  it("puts SQLite at ${BATON_DATA_DIR}/baton.sqlite when DATABASE_URL is unset", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-default-db-"));
    try {
      vi.stubEnv("BATON_DATA_DIR", path.join(dataDir, "nested"));
      vi.stubEnv("DATABASE_URL", undefined);
      resetEnvForTests();
      await getMigratedDb();
      expect(fs.existsSync(path.join(dataDir, "nested", "baton.sqlite"))).toBe(true);
    } finally {
      await closeDb();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
