import { randomBytes } from "node:crypto";

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** Crockford base32 of a millisecond time, 10 digits (the ULID's time part). */
function encodeTime(t: number): string {
  let out = "";
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

const RANDOM_DIGITS = 16;
const RANDOM_LIMIT = 1n << 80n;

/**
 * The random part plus a random step of 1 to 2^64, or null past 80 bits. The spec's monotonic mode
 * adds 1, which would make the next id (another account's sandbox, whose preview URL may be open)
 * computable from one's own; a 64-bit random step keeps the order and leaves it unguessable.
 */
function stepRandom(digits: string): string | null {
  let value = 0n;
  for (const ch of digits) value = value * 32n + BigInt(CROCKFORD.indexOf(ch));
  value += 1n + randomBytes(8).readBigUInt64BE();
  if (value >= RANDOM_LIMIT) return null;
  let out = "";
  for (let i = 0; i < RANDOM_DIGITS; i++) {
    out = CROCKFORD[Number(value % 32n)] + out;
    value /= 32n;
  }
  return out;
}

/** 80 random bits as 16 Crockford base32 digits. */
function randomPart(): string {
  const bytes = randomBytes(16);
  let rand = "";
  for (let i = 0; i < RANDOM_DIGITS; i++) rand += CROCKFORD[(bytes[i] ?? 0) % 32];
  return rand;
}

let lastTime = -1;
let lastRandom = "";

/**
 * A ULID: 48-bit millisecond time + 80 random bits, Crockford base32. Without `at` it is monotonic
 * within the process (the ULID spec's monotonic mode): an id made in the same millisecond as the one
 * before it (or while the clock stepped back) is that id's random part plus a random step, so id order is
 * creation order, which the lists' newest-first keyset paging (store/paging.ts) relies on. With
 * `at` (seeding rows in the past) it is a plain ULID of that time.
 */
export function ulid(at?: number): string {
  if (at !== undefined) return encodeTime(at) + randomPart();
  let now = Date.now();
  if (now <= lastTime) {
    const next = stepRandom(lastRandom);
    if (next !== null) {
      lastRandom = next;
      return encodeTime(lastTime) + lastRandom;
    }
    now = lastTime + 1;
  }
  lastTime = now;
  lastRandom = randomPart();
  return encodeTime(now) + lastRandom;
}

export type IdPrefix = "sbx" | "evt" | "tok" | "snap" | "vol" | "tmpl" | "wh" | "dlv" | "pty" | "acc";

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${ulid()}`;
}

/** URL-safe random secret with a readable prefix (tokens, preview tokens). */
export function newSecret(prefix: string, bytes = 24): string {
  return `${prefix}_${randomBytes(bytes).toString("base64url")}`;
}

/**
 * An id as the engine writes it (lower-case prefix, upper-case ULID), from any case a client sent:
 * ids are matched case-insensitively, and this lets that match use the primary key's index.
 */
export function canonicalId(id: string): string {
  const m = /^([A-Za-z]+)_([0-9A-Za-z]+)$/.exec(id);
  return m ? `${m[1]!.toLowerCase()}_${m[2]!.toUpperCase()}` : id;
}
