import "server-only";

// A short-lived, in-process memory of who is asking and with what: resolved sessions (sid → user,
// session row, memberships, connections without their tokens), resolved API tokens (hash → the same,
// lib/server/api-tokens/bearer.ts) and users' orkestr clients (user and
// connection → a client holding the decrypted token), so the checks behind every API call are not
// four database reads and a decryption each time.
//
// Bounds on staleness:
// - In this process, every write that can end or change a session or a connection (revocation,
//   sign-out, a user disabled or deleted, a membership added, changed or removed, a team changed or
//   deleted, a connection saved, replaced, activated or removed) calls forgetRemembered() once it
//   is written: the next request reads the database again. The writes are the repository
//   functions in lib/server/db/, so nothing changes a session or a token behind this memory's back.
// - In other processes (several console instances on one database), a change is seen within
//   SESSION_CACHE_TTL_MS: after that an entry is read again.
// - A session row's own expiry is honoured to the millisecond.
//
// A load that began before a forgetRemembered() is not kept (the epoch check): it may have read
// the row before the write. Only found values are kept; a missing or ended one is read each time.
//
// The state lives on globalThis: the console server loads lib/server through two module graphs in
// one process (Next's bundles, and tsx for the terminal relay and the API fast path), and a
// revocation in one must reach the other.

/** How long another instance's revocation can go unseen here. */
export const SESSION_CACHE_TTL_MS = 2_000;
const MAX_ENTRIES = 10_000;

interface Entry<T> {
  value: T;
  /** ms epoch after which the entry is read again. */
  until: number;
}

/** What is remembered: kept apart, so a user id and a sid can never meet. */
export type Kind = "session" | "connection" | "api-token";

interface Store {
  epoch: number;
  /** Per database handle (keys only mean something in the database they came from); keys are `kind:key`. */
  byDb: WeakMap<object, Map<string, Entry<unknown>>>;
}

const KEY = Symbol.for("baton.session-cache");
const holder = globalThis as typeof globalThis & { [KEY]?: Store };
const store = (): Store => (holder[KEY] ??= { epoch: 0, byDb: new WeakMap() });

/**
 * The `kind` value for `key` in `db`: from memory when loaded less than SESSION_CACHE_TTL_MS ago
 * (and before `expiresAt(value)`), else from `load()`. Null results are not kept.
 */
export async function remembered<T>(
  kind: Kind,
  db: object,
  key: string,
  load: () => Promise<T | null>,
  expiresAt: (value: T) => number = () => Number.POSITIVE_INFINITY,
  now = Date.now(),
): Promise<T | null> {
  const entryKey = `${kind}:${key}`;
  const s = store();
  let map = s.byDb.get(db);
  const hit = map?.get(entryKey);
  if (hit && hit.until > now) return hit.value as T;
  if (hit) map!.delete(entryKey);
  const epoch = s.epoch;
  const value = await load();
  if (value === null) return null;
  const current = store();
  if (current.epoch !== epoch) return value; // a write happened meanwhile: answer, but do not keep
  map = current.byDb.get(db);
  if (!map) current.byDb.set(db, (map = new Map()));
  if (map.size >= MAX_ENTRIES) map.delete(map.keys().next().value!);
  map.set(entryKey, { value, until: Math.min(now + SESSION_CACHE_TTL_MS, expiresAt(value)) });
  return value;
}

/** remembered("session", …): a live session behind a sid. */
export function cachedSession<T>(
  db: object,
  sid: string,
  load: () => Promise<T | null>,
  expiresAt: (value: T) => number,
  now = Date.now(),
): Promise<T | null> {
  return remembered("session", db, sid, load, expiresAt, now);
}

/**
 * Forgets everything remembered, in every database, and turns away loads already under way.
 * Called after any write that can end or change a session or a connection; such writes are rare,
 * so forgetting all is simpler than tracking which users one touches, and costs one read each.
 */
export function forgetRemembered(): void {
  const s = store();
  s.epoch += 1;
  s.byDb = new WeakMap();
}

/** Runs a write, then forgets what is remembered (also when it failed part way). */
export async function thenForget<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } finally {
    forgetRemembered();
  }
}
