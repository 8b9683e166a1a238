import "server-only";
import { randomBytes } from "node:crypto";

// Row ids are generated in app code, so SQLite and Postgres store the same text ids. ULIDs sort by
// creation time (audit events page by id; lists can order "newest first" without a timestamp
// index) and are URL-safe. Monotonic within the process: ids made in the same millisecond still
// sort in creation order.

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

let lastTime = -1;
let lastRandom = Buffer.alloc(10);

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
    const next = Buffer.from(lastRandom);
    for (let i = next.length - 1; i >= 0; i--) {
      const v = (next[i] ?? 0) + 1;
      next[i] = v & 0xff;
      if (v <= 0xff) break;
    }
    lastRandom = next;
  } else {
    lastTime = time;
    lastRandom = randomBytes(10);
  }
  return encodeTime(time) + encodeRandom(lastRandom);
}

/** Id with a readable type prefix, e.g. newId("usr") → "usr_01J…". */
export function newId(prefix: string): string {
  return `${prefix}_${ulid()}`;
}
