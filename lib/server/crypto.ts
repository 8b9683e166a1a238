import "server-only";
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  hkdfSync,
  randomBytes,
  scrypt as scryptCb,
  timingSafeEqual,
  type ScryptOptions,
} from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { secureDataDir } from "./data-dir";
import { getEnv, type ServerEnv } from "./env";
import { createLimiter } from "./limiter";

// Baton's cryptography, all on node:crypto:
// - AES-256-GCM for secrets at rest (orkestr tokens): "v1:<iv>:<tag>:<ciphertext>", base64url parts,
//   with optional associated data binding a ciphertext to its row.
// - the vault key from BATON_SECRET, or generated once into `${BATON_DATA_DIR}/secret.key` (0600);
// - scrypt password hashes "scrypt$N$r$p$salt$hash" (base64, no padding);
// - random tokens and sha256 for session ids and invitation tokens.

export class CryptoError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "CryptoError";
  }
}

// ---------------------------------------------------------------------------------------------
// Vault key

const KEY_BYTES = 32;
const HKDF_SALT = "baton";
const HKDF_INFO = "baton/vault/aes-256-gcm/v1";
const SECRET_FILE = "secret.key";

/** Turns secret material into the 32-byte AES key: used as-is when exactly 32 bytes, else HKDF-SHA256. */
export function deriveKey(material: Buffer): Buffer {
  if (material.length === KEY_BYTES) return Buffer.from(material);
  return Buffer.from(hkdfSync("sha256", material, HKDF_SALT, HKDF_INFO, KEY_BYTES));
}

/**
 * Reads `${dataDir}/secret.key`, creating it with 32 random bytes (mode 0600) on first use. Creation
 * is atomic (write a temp file, then link(2), which fails if another process won the race), so
 * concurrent first starts agree on one key.
 */
export function loadOrCreateKeyFile(dataDir: string): Buffer {
  const file = path.join(dataDir, SECRET_FILE);
  // The data dir 0700 (or no longer readable by others) and an existing key 0600.
  secureDataDir(dataDir);
  const read = (): Buffer | null => {
    let text: string;
    try {
      text = fs.readFileSync(file, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw new CryptoError(`cannot read the vault key ${file}: ${(err as Error).message}`, { cause: err });
    }
    const key = Buffer.from(text.trim(), "base64url");
    if (key.length !== KEY_BYTES || key.toString("base64url") !== text.trim()) {
      throw new CryptoError(
        `the vault key ${file} is corrupt (expected ${KEY_BYTES} bytes of base64url). Restore it from a backup: ` +
          "tokens encrypted with the old key cannot be decrypted with a new one.",
      );
    }
    return key;
  };

  const existing = read();
  if (existing) return existing;

  const tmp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  fs.writeFileSync(tmp, `${randomBytes(KEY_BYTES).toString("base64url")}\n`, { mode: 0o600, flag: "wx" });
  try {
    fs.linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
      throw new CryptoError(`cannot create the vault key ${file}: ${(err as Error).message}`, { cause: err });
    }
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  const created = read();
  if (!created) throw new CryptoError(`the vault key ${file} vanished while being created`);
  return created;
}

let keyCache: { env: ServerEnv; key: Buffer } | undefined;

/** The AES-256-GCM key for this process's environment (re-derived after resetEnvForTests()). */
export function getVaultKey(): Buffer {
  const env = getEnv();
  if (keyCache?.env !== env) {
    const key = env.BATON_SECRET ? deriveKey(env.BATON_SECRET) : loadOrCreateKeyFile(env.BATON_DATA_DIR);
    keyCache = { env, key };
  }
  return keyCache.key;
}

// ---------------------------------------------------------------------------------------------
// AES-256-GCM

const VERSION = "v1";
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface CipherOptions {
  /** Overrides the vault key (32 bytes). */
  key?: Buffer;
  /** Associated data the ciphertext is bound to (e.g. the row id); the same value must be given to decrypt. */
  aad?: string;
}

function resolveKey(key: Buffer | undefined): Buffer {
  const k = key ?? getVaultKey();
  if (k.length !== KEY_BYTES) throw new CryptoError(`AES-256-GCM needs a ${KEY_BYTES}-byte key (got ${k.length})`);
  return k;
}

/** Encrypts UTF-8 text into "v1:<iv b64url>:<tag b64url>:<ciphertext b64url>". */
export function encrypt(plaintext: string, options: CipherOptions = {}): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", resolveKey(options.key), iv, { authTagLength: TAG_BYTES });
  if (options.aad !== undefined) cipher.setAAD(Buffer.from(options.aad, "utf8"));
  const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [VERSION, iv.toString("base64url"), tag.toString("base64url"), ct.toString("base64url")].join(":");
}

const B64URL = /^[A-Za-z0-9_-]*$/;

/** Decrypts what encrypt() produced. Throws CryptoError when malformed, tampered with, or under another key. */
export function decrypt(payload: string, options: CipherOptions = {}): string {
  const parts = payload.split(":");
  if (parts.length !== 4 || !parts.every((p) => B64URL.test(p))) {
    throw new CryptoError("cannot decrypt: the value is not in the v1:<iv>:<tag>:<ciphertext> format");
  }
  const [version, ivPart, tagPart, ctPart] = parts as [string, string, string, string];
  if (version !== VERSION) throw new CryptoError(`cannot decrypt: unsupported format version "${version}"`);
  const iv = Buffer.from(ivPart, "base64url");
  const tag = Buffer.from(tagPart, "base64url");
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) {
    throw new CryptoError("cannot decrypt: the IV or authentication tag has the wrong length");
  }
  const decipher = createDecipheriv("aes-256-gcm", resolveKey(options.key), iv, { authTagLength: TAG_BYTES });
  if (options.aad !== undefined) decipher.setAAD(Buffer.from(options.aad, "utf8"));
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(Buffer.from(ctPart, "base64url")), decipher.final()]).toString("utf8");
  } catch (err) {
    throw new CryptoError(
      "cannot decrypt: authentication failed. The value was tampered with, or it was encrypted under a " +
        "different key (did BATON_SECRET or the data dir's secret.key change?)",
      { cause: err },
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Tokens and hashes

/** A display hint that reveals only the prefix and last four characters: "ork_…abcd". */
export function tokenHint(token: string): string {
  const t = token.trim();
  const prefix = /^[A-Za-z]{2,8}_/.exec(t)?.[0] ?? "";
  const rest = t.slice(prefix.length);
  // Too short to reveal a suffix without giving away a meaningful share of the secret.
  if (rest.length < 12) return `${prefix}…`;
  return `${prefix}…${rest.slice(-4)}`;
}

/** A URL-safe random token with `bytes` bytes of entropy (default 32). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

/** Lowercase hex SHA-256 of a UTF-8 string or bytes. */
export function sha256(input: string | Buffer): string {
  return createHash("sha256").update(input).digest("hex");
}

/** Constant-time string comparison (false on length mismatch). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, "utf8");
  const bb = Buffer.from(b, "utf8");
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

// ---------------------------------------------------------------------------------------------
// Passwords (scrypt)

export const SCRYPT_PARAMS = { N: 2 ** 15, r: 8, p: 1, saltBytes: 16, keyBytes: 32 } as const;
// Bounds for parameters read back from stored hashes, so a corrupt row cannot make us burn memory.
const MAX_N = 2 ** 20;
const MAX_R = 32;
const MAX_P = 16;

/**
 * How much scrypt work runs at once: each hash takes ~32 MiB and a libuv thread for tens of
 * milliseconds, so a flood of sign-in attempts would otherwise take every CPU and the thread pool
 * (which file and DNS work share). Beyond the queue, attempts are refused (503 server_busy) at once.
 */
export const PASSWORD_WORK = { concurrency: 2, maxQueue: 32 } as const;

/** Too many password checks are running and waiting: try again shortly (503 with Retry-After). */
export class PasswordWorkBusyError extends Error {
  override name = "PasswordWorkBusyError";
  readonly retryAfterSeconds = 1;
  constructor() {
    super("too many password checks are in progress");
  }
}

const passwordWork = createLimiter({ ...PASSWORD_WORK, onFull: () => new PasswordWorkBusyError() });

function scrypt(password: string, salt: Buffer, keylen: number, opts: ScryptOptions): Promise<Buffer> {
  return passwordWork.run(
    () =>
      new Promise<Buffer>((resolve, reject) => {
        scryptCb(password.normalize("NFC"), salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key)));
      }),
  );
}

function memFor(N: number, r: number): number {
  return 128 * N * r * 2; // headroom over the 128·N·r scrypt needs
}

const b64 = (b: Buffer) => b.toString("base64").replace(/=+$/, "");

/** Hashes a password: "scrypt$32768$8$1$<salt>$<hash>". */
export async function hashPassword(password: string): Promise<string> {
  const { N, r, p, saltBytes, keyBytes } = SCRYPT_PARAMS;
  const salt = randomBytes(saltBytes);
  const hash = await scrypt(password, salt, keyBytes, { N, r, p, maxmem: memFor(N, r) });
  return `scrypt$${N}$${r}$${p}$${b64(salt)}$${b64(hash)}`;
}

interface ParsedHash {
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  hash: Buffer;
}

function parseHash(stored: string): ParsedHash | null {
  const m = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/.exec(stored);
  if (!m) return null;
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const validN = N >= 2 && N <= MAX_N && (N & (N - 1)) === 0;
  if (!validN || r < 1 || r > MAX_R || p < 1 || p > MAX_P) return null;
  const salt = Buffer.from(m[4] ?? "", "base64");
  const hash = Buffer.from(m[5] ?? "", "base64");
  if (salt.length < 8 || hash.length < 16 || hash.length > 128) return null;
  return { N, r, p, salt, hash };
}

let dummyHash: Promise<string> | undefined;

/**
 * Verifies a password against a stored hash in constant time. Pass `null` when the user does not
 * exist: a dummy hash is checked so the answer takes as long as a real miss. Malformed hashes → false.
 */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  if (stored === null) {
    dummyHash ??= hashPassword(randomToken(16));
    await verifyPassword(password, await dummyHash);
    return false;
  }
  const parsed = parseHash(stored);
  if (!parsed) return false;
  const { N, r, p, salt, hash } = parsed;
  const candidate = await scrypt(password, salt, hash.length, { N, r, p, maxmem: memFor(N, r) });
  return timingSafeEqual(candidate, hash);
}

/** True when a stored hash was made with other parameters than today's (rehash after a successful sign-in). */
export function needsRehash(stored: string): boolean {
  const parsed = parseHash(stored);
  if (!parsed) return true;
  const { N, r, p, saltBytes, keyBytes } = SCRYPT_PARAMS;
  return (
    parsed.N !== N ||
    parsed.r !== r ||
    parsed.p !== p ||
    parsed.salt.length !== saltBytes ||
    parsed.hash.length !== keyBytes
  );
}
