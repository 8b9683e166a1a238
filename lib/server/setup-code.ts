import "server-only";
import { randomInt } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { decrypt, encrypt, safeEqual } from "./crypto";
import { getMigratedDb, type Db } from "./db/index";
import { isFirstRun } from "./db/setup";
import { getEnv } from "./env";

// The first-run setup code (as Grafana and Jenkins do): until the owner account exists, whoever
// reaches Baton first could create it. So the first run also asks for a code that only someone
// with access to the server has: printed in the console server's log at start, and kept in
// `${BATON_DATA_DIR}/setup-code` (0600). It is deleted once the owner exists.
//
// The code itself lives in the database (the `setup.code` setting, encrypted with the vault key),
// so that every Baton instance sharing one database prints and accepts the same code: behind a
// load balancer the setup form may reach another instance than the one whose log was read. The
// file in each data dir is a copy, for an admin who reads the code from disk.

const FILE = "setup-code";
const SETTING = "setup.code";
// No 0/O, 1/I/L: read off a terminal and typed.
const ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ";
const GROUPS = 3;
const GROUP_LENGTH = 4; // 12 characters of 31: about 59 bits

export function setupCodePath(dataDir: string): string {
  return path.join(dataDir, FILE);
}

/** "7qkx m3pd-v9tf" → "7QKXM3PDV9TF": what the user typed, as compared. */
export function normalizeSetupCode(value: string): string {
  return value.toUpperCase().replace(/[\s-]/g, "");
}

function newCode(): string {
  const groups: string[] = [];
  for (let g = 0; g < GROUPS; g++) {
    let group = "";
    for (let i = 0; i < GROUP_LENGTH; i++) group += ALPHABET[randomInt(ALPHABET.length)];
    groups.push(group);
  }
  return groups.join("-");
}

function readFile(file: string): string | null {
  try {
    const code = fs.readFileSync(file, "utf8").trim();
    return code || null;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}

/** Writes the data dir's copy (0600, replaced atomically) unless it already holds `code`. */
function writeFile(dataDir: string, code: string): void {
  const file = setupCodePath(dataDir);
  if (readFile(file) === code) return;
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${code}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

/** The stored code, or null when there is none. */
async function readStored(db: Db): Promise<string | null> {
  const row = await db.selectFrom("settings").select("value").where("key", "=", SETTING).executeTakeFirst();
  return row ? decrypt(row.value, { aad: SETTING }) : null;
}

const printed = globalThis as typeof globalThis & { __batonSetupCodePrinted?: string };

/**
 * The setup code, created if there is none yet (concurrent first calls, in one process or in
 * several sharing the database, agree on one), copied into the data dir and printed to the log
 * once per process. Call only while Baton has no user.
 */
export async function ensureSetupCode(
  db: Db,
  dataDir: string,
  log: (line: string) => void = console.log,
): Promise<string> {
  let code = await readStored(db);
  if (!code) {
    // A code an older Baton printed and kept only in its data dir stays the one to type.
    const candidate = readFile(setupCodePath(dataDir)) ?? newCode();
    await db
      .insertInto("settings")
      .values({ key: SETTING, value: encrypt(candidate, { aad: SETTING }) })
      .onConflict((oc) => oc.column("key").doNothing())
      .execute();
    code = (await readStored(db)) ?? candidate;
  }
  writeFile(dataDir, code);
  if (printed.__batonSetupCodePrinted !== code) {
    printed.__batonSetupCodePrinted = code;
    log(
      `  First run: the setup code is ${code} (also in ${setupCodePath(dataDir)}). Open Baton and enter it to create the owner account.`,
    );
  }
  return code;
}

/** Whether `given` is the setup code (constant-time; false when there is none). */
export async function checkSetupCode(db: Db, given: string | null | undefined): Promise<boolean> {
  const code = await readStored(db);
  if (!code || !given) return false;
  return safeEqual(normalizeSetupCode(given), normalizeSetupCode(code));
}

/** Deletes the setup code: the owner exists, the code has done its job (other instances' copies go at their next start). */
export async function clearSetupCode(db: Db, dataDir: string): Promise<void> {
  await db.deleteFrom("settings").where("key", "=", SETTING).execute();
  fs.rmSync(setupCodePath(dataDir), { force: true });
}

/**
 * At server start (scripts/console-server.mjs): while Baton has no user, make sure there is a setup
 * code and print it; once there is one, remove a copy left in this data dir. Before the server
 * listens, so the code exists before anyone can ask for it.
 */
export async function announceSetupCode(log: (line: string) => void = console.log): Promise<void> {
  const db = await getMigratedDb();
  const dataDir = getEnv().BATON_DATA_DIR;
  if (await isFirstRun(db)) await ensureSetupCode(db, dataDir, log);
  else fs.rmSync(setupCodePath(dataDir), { force: true });
}
