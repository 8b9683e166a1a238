import "server-only";
import { randomFillSync } from "node:crypto";

// Row ids are generated in app code, so SQLite and Postgres store the same text ids. ULIDs sort by
// creation time (audit events page by id; lists can order "newest first" without a timestamp
// index) and are URL-safe. Monotonic within the process: ids made in the same millisecond still
// sort in creation order.

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

const RANDOM_BYTES = 10;

let lastTime = -1;
// Owned by this module and rewritten in place: never a view into the pool below, whose refill
// would otherwise change the random part a same-millisecond id steps from.
const lastRandom = Buffer.alloc(RANDOM_BYTES);

// Random bytes come from a 4 KiB pool, refilled from the CSPRNG when fewer than an id's 10 bytes
// are left: a randomBytes(10) per id was a syscall-sized cost on every API request (each has a
// request id). Each pooled byte is handed out once, so ids are exactly as unpredictable and as
// unique as with a fresh randomBytes() each time.
const POOL_SIZE = 4096;
const pool = Buffer.allocUnsafe(POOL_SIZE);
let poolOffset = POOL_SIZE;

/** Copies the next 10 unused random bytes into `into`. */
function takeRandom(into: Buffer): void {
  if (poolOffset + RANDOM_BYTES > POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  pool.copy(into, 0, poolOffset, poolOffset + RANDOM_BYTES);
  poolOffset += RANDOM_BYTES;
}

function encodeTime(ms: number): string {
  let out = "";
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD.charAt(t % 32) + out;
    t = Math.floor(t / 32);
  }
  return out;
}

function encodeRandom(bytes: Buffer): string {
  // 80 bits → 16 base32 characters, 5 bits at a time.
  let out = "";
  let acc = 0;
  let bits = 0;
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += CROCKFORD.charAt((acc >> bits) & 31);
    }
    acc &= (1 << bits) - 1;
  }
  return out;
}

/** A 26-character ULID: 48 bits of epoch milliseconds, then 80 random bits, Crockford base32. */
export function ulid(now: number = Date.now()): string {
  let time = Math.floor(now);
  if (time <= lastTime) {
    // Same (or an earlier: clock stepped back) millisecond: keep the time, add one to the random part.
    time = lastTime;
    for (let i = lastRandom.length - 1; i >= 0; i--) {
      const v = (lastRandom[i] ?? 0) + 1;
      lastRandom[i] = v & 0xff;
      if (v <= 0xff) break;
    }
  } else {
    lastTime = time;
    takeRandom(lastRandom);
  }
  return encodeTime(time) + encodeRandom(lastRandom);
}

/** Id with a readable type prefix, e.g. newId("usr") → "usr_01J…". */
export function newId(prefix: string): string {
  return `${prefix}_${ulid()}`;
}
