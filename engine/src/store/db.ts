import Database from "better-sqlite3";
import fs from "node:fs";
import path from "node:path";

/**
 * The engine's own state (tokens, sandboxes, events). Migrations are an ordered list;
 * `user_version` records how far a database has come, so a restart never re-runs one.
 */
/** The account that everything made before accounts existed belongs to, and tokens minted without --account. */
export const DEFAULT_ACCOUNT_ID = "acc_default";
export const DEFAULT_ACCOUNT_NAME = "default";

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
  // Webhooks with their persisted delivery queue, and per-day usage (UTC dates) booked from the meter.
  `
  CREATE TABLE webhooks (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    event_types TEXT NOT NULL,
    description TEXT,
    secret TEXT NOT NULL,
    enabled INTEGER NOT NULL,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    disabled_reason TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE TABLE webhook_deliveries (
    id TEXT PRIMARY KEY,
    webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    body TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    response_status INTEGER,
    response_body_excerpt TEXT,
    error TEXT,
    duration_ms INTEGER,
    redelivered_from TEXT,
    created_at INTEGER NOT NULL,
    last_attempt_at INTEGER,
    next_attempt_at INTEGER
  );
  CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries(webhook_id, id);
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries(status, next_attempt_at);
  CREATE TABLE usage_daily (
    sandbox_id TEXT NOT NULL,
    date TEXT NOT NULL,
    cpu_seconds REAL NOT NULL DEFAULT 0,
    gb_seconds REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (sandbox_id, date)
  );
  CREATE INDEX usage_daily_by_date ON usage_daily(date);
  -- Usage metered before this table existed is booked on the day its sandbox started.
  INSERT INTO usage_daily(sandbox_id, date, cpu_seconds, gb_seconds)
    SELECT id, strftime('%Y-%m-%d', COALESCE(started_at, created_at) / 1000, 'unixepoch'), cpu_seconds, gb_seconds
    FROM sandboxes WHERE cpu_seconds > 0 OR gb_seconds > 0;
  `,
  // Named snapshots and volumes; a sandbox remembers the snapshot it was forked from and its volume.
  `
  CREATE TABLE snapshots (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    sandbox_id TEXT NOT NULL,
    template TEXT NOT NULL,
    size TEXT NOT NULL,
    region TEXT NOT NULL,
    status TEXT NOT NULL,
    size_bytes INTEGER NOT NULL DEFAULT 0,
    capture_ms INTEGER,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX snapshots_by_sandbox ON snapshots(sandbox_id, id);
  CREATE TABLE volumes (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    size_gb INTEGER NOT NULL,
    region TEXT NOT NULL,
    status TEXT NOT NULL,
    attached_sandbox_id TEXT,
    used_bytes INTEGER NOT NULL DEFAULT 0,
    owner_uid INTEGER,
    lifetime_hours INTEGER,
    move_to TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  ALTER TABLE sandboxes ADD COLUMN snapshot_id TEXT;
  ALTER TABLE sandboxes ADD COLUMN volume_id TEXT;
  `,
  // Custom templates (issue 5): the recipe, its build state, and the build log lines.
  `
  CREATE TABLE templates (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    base_image TEXT NOT NULL,
    steps TEXT NOT NULL,
    env TEXT NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    size_mb REAL,
    created_at INTEGER NOT NULL,
    started_at INTEGER,
    ready_at INTEGER,
    finished_at INTEGER,
    deleted_at INTEGER
  );
  CREATE UNIQUE INDEX templates_name ON templates(name) WHERE deleted_at IS NULL;
  CREATE TABLE template_logs (
    template_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    t INTEGER NOT NULL,
    step_index INTEGER,
    stream TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (template_id, seq)
  );
  `,
  // Accounts (tenancy): every token, sandbox, snapshot, volume, template, webhook and event belongs
  // to one. What existed before belongs to the "default" account; names are unique per account.
  // (SQLite refuses ADD COLUMN … REFERENCES with a non-NULL default while foreign keys are on, so
  // the added columns carry no REFERENCES; the rebuilt tables do.) Rebuilding is SQLite's only way
  // to change a UNIQUE constraint, so snapshots_new and volumes_new repeat migration 2's columns:
  // on purpose, as a shipped migration's text never changes (fresh and upgraded databases must end
  // with the same schema), and a shared fragment would let an edit made for one silently change both.
  `
  CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
  );
  INSERT INTO accounts(id, name, created_at) VALUES ('${DEFAULT_ACCOUNT_ID}', 'default', CAST(strftime('%s','now') AS INTEGER) * 1000);
  ALTER TABLE tokens ADD COLUMN account_id TEXT NOT NULL DEFAULT '${DEFAULT_ACCOUNT_ID}';
  ALTER TABLE tokens ADD COLUMN expires_at INTEGER;
  CREATE INDEX tokens_by_account ON tokens(account_id, id);
  ALTER TABLE sandboxes ADD COLUMN account_id TEXT NOT NULL DEFAULT '${DEFAULT_ACCOUNT_ID}';
  CREATE INDEX sandboxes_by_account ON sandboxes(account_id, id);
  ALTER TABLE events ADD COLUMN account_id TEXT;
  UPDATE events SET account_id = COALESCE((SELECT s.account_id FROM sandboxes s WHERE s.id = events.sandbox_id), '${DEFAULT_ACCOUNT_ID}');
  ALTER TABLE webhooks ADD COLUMN account_id TEXT NOT NULL DEFAULT '${DEFAULT_ACCOUNT_ID}';
  CREATE INDEX webhooks_by_account ON webhooks(account_id, id);
  ALTER TABLE templates ADD COLUMN account_id TEXT NOT NULL DEFAULT '${DEFAULT_ACCOUNT_ID}';
  DROP INDEX templates_name;
  CREATE UNIQUE INDEX templates_name ON templates(account_id, name) WHERE deleted_at IS NULL;
  -- snapshots.name and volumes.name were UNIQUE across the engine: rebuilt unique per account.
  CREATE TABLE snapshots_new (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    name TEXT NOT NULL,
    sandbox_id TEXT NOT NULL,
    template TEXT NOT NULL,
    size TEXT NOT NULL,
    region TEXT NOT NULL,
    status TEXT NOT NULL,
    size_bytes INTEGER NOT NULL DEFAULT 0,
    capture_ms INTEGER,
    created_at INTEGER NOT NULL,
    UNIQUE (account_id, name)
  );
  INSERT INTO snapshots_new(id, account_id, name, sandbox_id, template, size, region, status, size_bytes, capture_ms, created_at)
    SELECT id, COALESCE((SELECT s.account_id FROM sandboxes s WHERE s.id = snapshots.sandbox_id), '${DEFAULT_ACCOUNT_ID}'),
           name, sandbox_id, template, size, region, status, size_bytes, capture_ms, created_at FROM snapshots;
  DROP TABLE snapshots;
  ALTER TABLE snapshots_new RENAME TO snapshots;
  CREATE INDEX snapshots_by_sandbox ON snapshots(sandbox_id, id);
  CREATE INDEX snapshots_by_account ON snapshots(account_id, id);
  CREATE TABLE volumes_new (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    name TEXT NOT NULL,
    size_gb INTEGER NOT NULL,
    region TEXT NOT NULL,
    status TEXT NOT NULL,
    attached_sandbox_id TEXT,
    used_bytes INTEGER NOT NULL DEFAULT 0,
    owner_uid INTEGER,
    lifetime_hours INTEGER,
    move_to TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (account_id, name)
  );
  INSERT INTO volumes_new(id, account_id, name, size_gb, region, status, attached_sandbox_id, used_bytes, owner_uid, lifetime_hours, move_to, created_at, updated_at)
    SELECT id, '${DEFAULT_ACCOUNT_ID}', name, size_gb, region, status, attached_sandbox_id, used_bytes, owner_uid, lifetime_hours, move_to, created_at, updated_at FROM volumes;
  DROP TABLE volumes;
  ALTER TABLE volumes_new RENAME TO volumes;
  CREATE INDEX volumes_by_account ON volumes(account_id, id);
  `,
  // Secrets in stored idempotent responses (a webhook's secret, a preview token) are sealed with a
  // key outside the database (services/idempotency.ts); those stored in the clear before are dropped.
  `
  ALTER TABLE idempotency ADD COLUMN sealed TEXT;
  DELETE FROM idempotency
    WHERE json_extract(body, '$.secret') IS NOT NULL OR json_extract(body, '$.preview_auth_token') IS NOT NULL;
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
  db.prepare("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(
    key,
    value,
  );
}
