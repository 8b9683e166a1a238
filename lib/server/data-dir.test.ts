import "server-only";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import SqliteDatabase from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import { getVaultKey } from "./crypto";
import { closeDb, getMigratedDb } from "./db/index";
import { resetEnvForTests } from "./env";

// The console's data directory on SQLite, through the real start-up path (getMigratedDb() and the
// vault key): the database, its WAL and secret.key must not be readable by other users.

const mode = (p: string) => fs.statSync(p).mode & 0o777;
const dirs: string[] = [];

function useDataDir(dir: string): void {
  vi.stubEnv("BATON_DATA_DIR", dir);
  vi.stubEnv("DATABASE_URL", "");
  vi.stubEnv("BATON_SECRET", "");
  resetEnvForTests();
}

/** Starts the console's database and vault key on `dir`, and writes one row (so the WAL has content). */
async function start(): Promise<void> {
  const db = await getMigratedDb();
  await db.insertInto("settings").values({ key: "probe", value: "1" }).execute();
  getVaultKey();
}

afterEach(async () => {
  await closeDb();
  vi.unstubAllEnvs();
  resetEnvForTests();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe("the data directory's permissions (SQLite)", () => {
  it("a fresh start creates data/ 0700 and baton.sqlite, its WAL and shared memory, and secret.key 0600", async () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), "baton-perm-"));
    dirs.push(parent);
    const dir = path.join(parent, "data");
    useDataDir(dir);
    await start();
    expect(mode(dir)).toBe(0o700);
    for (const f of ["baton.sqlite", "baton.sqlite-wal", "baton.sqlite-shm", "secret.key"])
      expect(mode(path.join(dir, f)), f).toBe(0o600);
  });

  it("an older version's world-readable data dir (0755, files 0644) is tightened at start", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-perm-old-"));
    dirs.push(dir);
    // What an older Baton left behind under the default umask.
    const old = new SqliteDatabase(path.join(dir, "baton.sqlite"));
    old.pragma("journal_mode = WAL");
    old.exec("create table leftover (x text); insert into leftover values ('secret');");
    fs.writeFileSync(path.join(dir, "secret.key"), `${Buffer.alloc(32, 9).toString("base64url")}\n`);
    for (const f of ["baton.sqlite", "baton.sqlite-wal", "baton.sqlite-shm", "secret.key"])
      fs.chmodSync(path.join(dir, f), 0o644);
    fs.chmodSync(dir, 0o755);
    old.close();
    // (closing the last connection checkpoints and removes the WAL; leave one behind as a crash would)
    fs.writeFileSync(path.join(dir, "baton.sqlite-wal"), "");
    fs.chmodSync(path.join(dir, "baton.sqlite-wal"), 0o644);

    useDataDir(dir);
    await start();
    // Group and other may no longer list or read it; search (x) stays for the engine's sandbox uids.
    expect(mode(dir) & 0o066).toBe(0);
    expect(mode(dir) & 0o700).toBe(0o700);
    for (const f of ["baton.sqlite", "baton.sqlite-wal", "baton.sqlite-shm", "secret.key"])
      expect(mode(path.join(dir, f)), f).toBe(0o600);
  });
});
