import { randomBytes } from "node:crypto";

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** A ULID: 48-bit millisecond time + 80 random bits, Crockford base32, sortable by creation time. */
export function ulid(now = Date.now()): string {
  let time = "";
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const bytes = randomBytes(16);
  let rand = "";
  for (let i = 0; i < 16; i++) rand += CROCKFORD[(bytes[i] ?? 0) % 32];
  return time + rand;
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
