import "server-only";
import SqliteDatabase from "better-sqlite3";
import { Kysely, PostgresDialect, SqliteDialect, sql } from "kysely";
import { Migrator } from "kysely";
import pg from "pg";
import { secureDataDir, secureSqliteFile } from "../data-dir";
import { getEnv, type DatabaseTarget } from "../env";
import { startHousekeeping } from "../housekeeping";
import { checkVaultKey } from "../vault-key-check";
import { MigrationError } from "./errors";
import { migrationProvider } from "./migrations/index";
import type { Database } from "./schema";
import { isPostgres } from "./util";

export type Db = Kysely<Database>;
export type { Database } from "./schema";

export type DbConfig =
  | { kind: "sqlite"; path: string }
  | {
      kind: "postgres";
      url: string;
      /** Schema to put first on the search_path (tests run each suite in a fresh one). */
      schema?: string;
      /** Pool size (default 10). */
      max?: number;
    };

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

// Postgres returns bigint (int8) as a string; our int8 columns are epoch milliseconds and counts,
// all far below 2^53, so they come back as numbers like on SQLite. Scoped to our pool only.
const pgTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === pg.types.builtins.INT8 && format !== "binary"
      ? (v: string) => Number(v)
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig["getTypeParser"],
};

function openSqlite(file: string): SqliteDatabase.Database {
  // 0600 before SQLite opens it, so its WAL and shared-memory files get 0600 too.
  if (file !== ":memory:") secureSqliteFile(file);
  const db = new SqliteDatabase(file);
  if (file !== ":memory:") db.pragma("journal_mode = WAL");
  db.pragma("foreign_keys = ON");
  db.pragma("busy_timeout = 5000");
  db.pragma("synchronous = NORMAL");
  return db;
}

/** Creates a Kysely instance for a database target. The caller owns it (db.destroy()). */
export function createDb(config: DbConfig | DatabaseTarget): Db {
  if (config.kind === "sqlite") {
    return new Kysely<Database>({ dialect: new SqliteDialect({ database: openSqlite(config.path) }) });
  }
  const schema = "schema" in config ? config.schema : undefined;
  if (schema !== undefined && !IDENTIFIER.test(schema)) {
    throw new Error(`invalid Postgres schema name ${JSON.stringify(schema)} (expected [a-z_][a-z0-9_]*)`);
  }
  const pool = new pg.Pool({
    connectionString: config.url,
    max: ("max" in config ? config.max : undefined) ?? 10,
    types: pgTypes,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on("error", (err) => console.error("[baton] postgres pool error:", err.message));
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

/**
 * Brings the schema up to date and returns the names of the migrations it applied (empty when it
 * already was). Safe to run concurrently and repeatedly. On Postgres the bookkeeping tables live in
 * the current schema (first on search_path), so several schemas in one database stay independent.
 */
export async function migrateToLatest(db: Db): Promise<string[]> {
  let migrationTableSchema: string | undefined;
  if (isPostgres(db)) {
    const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
    migrationTableSchema = rows[0]?.schema ?? undefined;
    if (!migrationTableSchema)
      throw new MigrationError(undefined, { cause: new Error("no current schema (check search_path)") });
  }
  const migrator = new Migrator({ db, provider: migrationProvider, migrationTableSchema });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === "Error")?.migrationName;
    throw new MigrationError(failed, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}

// One instance per process, kept on globalThis so Next.js dev reloads don't open a pool per reload.
// It is keyed by the database target, not by the env object: a production build bundles env.ts
// into several chunks (pages, route handlers), each with its own parsed env, and an identity check
// made them destroy each other's pool mid-request ("driver has already been destroyed").
interface DbHolder {
  target: string;
  db: Db;
  ready?: Promise<Db>;
}
const holder = globalThis as typeof globalThis & { __batonDb?: DbHolder };

/** The console's database, from DATABASE_URL (SQLite under BATON_DATA_DIR by default). */
export function getDb(): Db {
  const { database, BATON_DATA_DIR } = getEnv();
  const target = JSON.stringify(database);
  const current = holder.__batonDb;
  if (current && current.target === target) return current.db;
  if (current) void current.db.destroy().catch(() => {});
  // Once per process (and database): the data dir and secret.key, also those an older version left open.
  secureDataDir(BATON_DATA_DIR);
  const db = createDb(database);
  holder.__batonDb = { target, db };
  return db;
}

/**
 * The process's database once it is open and migrated, or null: what housekeeping cleans. It never
 * opens one itself (a test that closed its database, a process that is shutting down).
 */
function openDb(): Promise<Db> | null {
  return holder.__batonDb?.ready ?? null;
}

/**
 * getDb(), migrated to the latest schema and checked to be under this process's vault key
 * (lib/server/vault-key-check.ts), once per process; also starts the process's housekeeping.
 */
export function getMigratedDb(): Promise<Db> {
  const db = getDb();
  const h = holder.__batonDb;
  if (!h) return migrateToLatest(db).then(() => db);
  h.ready ??= migrateToLatest(db)
    // Instances sharing this database must share its vault key: checked before anything is served.
    .then(() => checkVaultKey(db))
    .then(
      () => {
        startHousekeeping({ db: openDb });
        return db;
      },
      (err: unknown) => {
        h.ready = undefined;
        throw err;
      },
    );
  return h.ready;
}

/** Closes the process-wide database (tests, graceful shutdown). */
export async function closeDb(): Promise<void> {
  const current = holder.__batonDb;
  holder.__batonDb = undefined;
  if (current) await current.db.destroy();
}
