import { randomBytes } from "node:crypto";
import pg from "pg";

/**
 * The console database an e2e worker runs against. SQLite is the embedded default (a file under the
 * console's BATON_DATA_DIR, nothing to set); Postgres is a brand-new schema in the server that
 * TEST_DATABASE_URL names (`bash scripts/postgres.sh` starts one and prints it), put first on the
 * search_path through the URL, and dropped when the worker is done.
 */
export type ConsoleDatabaseKind = "sqlite" | "postgres";

export interface ConsoleDatabase {
  /** Environment for the console process: DATABASE_URL for Postgres, none for SQLite. */
  env: { DATABASE_URL?: string };
  drop(): Promise<void>;
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function consoleDatabase(kind: ConsoleDatabaseKind): Promise<ConsoleDatabase> {
  if (kind === "sqlite") return { env: {}, drop: async () => {} };
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error("the postgres e2e project needs TEST_DATABASE_URL (bash scripts/postgres.sh prints one)");
  const schema = `baton_e2e_${randomBytes(6).toString("hex")}`;
  await withClient(url, (c) => c.query(`create schema "${schema}"`));
  const sep = url.includes("?") ? "&" : "?";
  return {
    env: { DATABASE_URL: `${url}${sep}options=${encodeURIComponent(`-c search_path=${schema}`)}` },
    drop: () => withClient(url, (c) => c.query(`drop schema if exists "${schema}" cascade`)).then(() => undefined),
  };
}
