import "server-only";
import { randomInt } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { safeEqual } from "./crypto";
import { getMigratedDb } from "./db/index";
import { isFirstRun } from "./db/setup";
import { getEnv } from "./env";

// The first-run setup code (as Grafana and Jenkins do): until the owner account exists, whoever
// reaches Baton first could create it. So the first run also asks for a code that only someone
// with access to the server has: printed in the console server's log at start, and kept in
// `${BATON_DATA_DIR}/setup-code` (0600). It is deleted once the owner exists.

const FILE = "setup-code";
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

function read(file: string): string | null {
  try {
    const code = fs.readFileSync(file, "utf8").trim();
    return code || null;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}

const printed = globalThis as typeof globalThis & { __batonSetupCodePrinted?: string };

/**
 * The setup code, created (0600, atomically: concurrent first calls agree) if there is none yet,
 * and printed to the log once per process. Call only while Baton has no user.
 */
export function ensureSetupCode(dataDir: string, log: (line: string) => void = console.log): string {
  const file = setupCodePath(dataDir);
  let code = read(file);
  if (!code) {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    try {
      fs.writeFileSync(file, `${newCode()}\n`, { mode: 0o600, flag: "wx" });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    code = read(file) ?? "";
  }
  if (printed.__batonSetupCodePrinted !== code) {
    printed.__batonSetupCodePrinted = code;
    log(
      `  First run: the setup code is ${code} (also in ${file}). Open Baton and enter it to create the owner account.`,
    );
  }
  return code;
}

/** Whether `given` is the setup code (constant-time; false when there is none). */
export function checkSetupCode(dataDir: string, given: string | null | undefined): boolean {
  const code = read(setupCodePath(dataDir));
  if (!code || !given) return false;
  return safeEqual(normalizeSetupCode(given), normalizeSetupCode(code));
}

/** Deletes the setup code: the owner exists, the code has done its job. */
export function clearSetupCode(dataDir: string): void {
  fs.rmSync(setupCodePath(dataDir), { force: true });
}

/**
 * At server start (scripts/console-server.mjs): while Baton has no user, make sure there is a setup
 * code and print it. Before the server listens, so the code exists before anyone can ask for it.
 */
export async function announceSetupCode(log: (line: string) => void = console.log): Promise<void> {
  if (await isFirstRun(await getMigratedDb())) ensureSetupCode(getEnv().BATON_DATA_DIR, log);
}
