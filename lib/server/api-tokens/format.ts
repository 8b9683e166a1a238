import "server-only";
import { randomBytes, timingSafeEqual } from "node:crypto";
import { sha256 } from "../crypto";

// What a personal API token looks like, and the one thing Baton keeps of it (issue 23).
//
//   bat_ + 32 random base62 characters (≈190 bits) + 6 base62 characters of their CRC32
//
// The `bat_` prefix lets secret scanners (GitHub's, gitleaks, trufflehog) recognise a leaked token;
// the checksum, as in GitHub's tokens, lets them (and Baton) tell a real token from a look-alike
// without a database: a string with a wrong checksum is refused before any query. Only letters and
// digits after the prefix, so a double click selects the whole token. The database keeps the SHA-256
// of the whole token (enough for 190 random bits: no salt or slow hash is needed against guessing).

export const API_TOKEN_PREFIX = "bat_";
const BODY_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
export const API_TOKEN_LENGTH = API_TOKEN_PREFIX.length + BODY_LENGTH + CHECKSUM_LENGTH;
const SHAPE = new RegExp(`^${API_TOKEN_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (IEEE, as zlib's) of an ASCII string. */
export function crc32(text: string): number {
  let crc = 0xffffffff;
  for (let i = 0; i < text.length; i++) crc = CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** A 32-bit number as exactly 6 base62 digits (62^6 > 2^32), zero-padded. */
function base62Fixed(value: number): string {
  let out = "";
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[value % 62]! + out;
    value = Math.floor(value / 62);
  }
  return out;
}

/** Uniform base62 characters by rejection sampling (no modulo bias). */
function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 × 62: bytes at or above it would favour the first characters.
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

const checksumOf = (body: string) => base62Fixed(crc32(body));

/** A new token (handed out once, never stored), the hash to store, and the hint shown in lists. */
export function newApiToken(): { token: string; hash: string; hint: string } {
  const body = randomBase62(BODY_LENGTH);
  const token = `${API_TOKEN_PREFIX}${body}${checksumOf(body)}`;
  return { token, hash: sha256(token), hint: apiTokenHint(token) };
}

/** What a list shows of a token: the prefix and its last four characters. */
export function apiTokenHint(token: string): string {
  return `${API_TOKEN_PREFIX}…${token.slice(-4)}`;
}

/** Whether a string has the shape and a correct checksum of a Baton token (no database needed). */
export function isWellFormedApiToken(token: string): boolean {
  if (!SHAPE.test(token)) return false;
  const body = token.slice(API_TOKEN_PREFIX.length, API_TOKEN_PREFIX.length + BODY_LENGTH);
  const given = Buffer.from(token.slice(-CHECKSUM_LENGTH));
  return timingSafeEqual(given, Buffer.from(checksumOf(body)));
}

/** The stored hash of a presented token, or null when it cannot be one of ours. */
export function apiTokenHash(token: string): string | null {
  return isWellFormedApiToken(token) ? sha256(token) : null;
}
