import Database from "better-sqlite3";
import fs from "node:fs";
import path from "node:path";

/**
 * The engine's own state (tokens, sandboxes, events). Migrations are an ordered list;
 * `user_version` records how far a database has come, so a restart never re-runs one.
 */
const MIGRATIONS: string[] = [
  `
  CREATE TABLE tokens (
    id TEXT PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,
    hint TEXT NOT NULL,
    scopes TEXT NOT NULL,
    label TEXT,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
  );
  CREATE TABLE sandboxes (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    template TEXT NOT NULL,
    size TEXT NOT NULL,
    cpu REAL NOT NULL,
    memory_mb INTEGER NOT NULL,
    network TEXT NOT NULL,
    allow_domains TEXT,
    region TEXT NOT NULL,
    metadata TEXT NOT NULL,
    env_keys TEXT NOT NULL,
    timeout_seconds INTEGER NOT NULL,
    on_timeout TEXT NOT NULL,
    auto_resume INTEGER NOT NULL,
    preview_auth INTEGER NOT NULL,
    preview_token_hash TEXT,
    uid INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    started_at INTEGER,
    expires_at INTEGER,
    paused_at INTEGER,
    terminated_at INTEGER,
    running_since INTEGER,
    status_reason TEXT,
    cpu_seconds REAL NOT NULL DEFAULT 0,
    gb_seconds REAL NOT NULL DEFAULT 0
  );
  CREATE INDEX sandboxes_status ON sandboxes(status);
  CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    sandbox_id TEXT,
    t INTEGER NOT NULL,
    type TEXT NOT NULL,
    data TEXT NOT NULL
  );
  CREATE INDEX events_sandbox ON events(sandbox_id, seq);
  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  `,
  `
  CREATE TABLE idempotency (
    token_id TEXT NOT NULL,
    route TEXT NOT NULL,
    key TEXT NOT NULL,
    status INTEGER NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (token_id, route, key)
  );
  `,
];

export type Db = Database.Database;

export function openDb(root: string): Db {
  fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  // It holds the presigned-URL signing key: owner-only. SQLite gives -wal and -shm the same mode.
  const file = path.join(root, "engine.sqlite");
  fs.closeSync(fs.openSync(file, "a", 0o600));
  for (const f of [file, `${file}-wal`, `${file}-shm`]) if (fs.existsSync(f)) fs.chmodSync(f, 0o600);
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("foreign_keys = ON");
  migrate(db);
  return db;
}

function migrate(db: Db): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}

export function getMeta(db: Db, key: string): string | undefined {
  const row = db.prepare("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | undefined;
  return row?.value;
}

export function setMeta(db: Db, key: string, value: string): void {
  db.prepare("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(key, value);
}
