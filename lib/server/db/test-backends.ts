import "server-only";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { createDb, type Db } from "./index";

// The database backends the DB test suites run against: SQLite always, Postgres when
// TEST_DATABASE_URL is set (bash scripts/postgres.sh prints one). Every open() gives a brand-new,
// empty database: a temp file on SQLite, a fresh schema (first on search_path) on Postgres.

export interface TestDatabase {
  db: Db;
  /** For Postgres, the schema the tables live in; for SQLite, the database file. */
  location: string;
  /** A DATABASE_URL that reaches the same database (for getDb() tests). */
  url: string;
  close(): Promise<void>;
}

export interface TestBackend {
  name: "sqlite" | "postgres";
  open(): Promise<TestDatabase>;
}

const sqliteBackend: TestBackend = {
  name: "sqlite",
  async open() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-db-"));
    const file = path.join(dir, "test.sqlite");
    const db = createDb({ kind: "sqlite", path: file });
    return {
      db,
      location: file,
      url: `sqlite:${file}`,
      async close() {
        await db.destroy();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

function postgresBackend(url: string): TestBackend {
  return {
    name: "postgres",
    async open() {
      const schema = `baton_t_${randomBytes(6).toString("hex")}`;
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        await admin.query(`create schema "${schema}"`);
      } finally {
        await admin.end();
      }
      const db = createDb({ kind: "postgres", url, schema, max: 5 });
      const sep = url.includes("?") ? "&" : "?";
      return {
        db,
        location: schema,
        url: `${url}${sep}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
        async close() {
          await db.destroy();
          const c = new pg.Client({ connectionString: url });
          await c.connect();
          try {
            await c.query(`drop schema if exists "${schema}" cascade`);
          } finally {
            await c.end();
          }
        },
      };
    },
  };
}

export const testBackends: TestBackend[] = [
  sqliteBackend,
  ...(process.env.TEST_DATABASE_URL ? [postgresBackend(process.env.TEST_DATABASE_URL)] : []),
];
