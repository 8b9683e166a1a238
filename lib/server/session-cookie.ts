import "server-only";
import { hkdfSync } from "node:crypto";
import { decode, encode } from "next-auth/jwt";
import { getVaultKey } from "./crypto";
import { SESSION_TTL_MS } from "./db/sessions";

// The session cookie is next-auth's: an encrypted JWT (JWE, A256GCM, key derived from the secret
// below) in `next-auth.session-token` (`__Secure-…` over HTTPS). Its only claim of ours is `sid`,
// the random session token whose sha256 is the `sessions` row id. So the cookie is useless without
// a live row (sign-out revokes it server-side), and the table is useless without the secret.

export const SESSION_COOKIE = "next-auth.session-token";
export const SECURE_SESSION_COOKIE = "__Secure-next-auth.session-token";

/** Session lifetime in seconds: the JWT's and the cookie's, equal to the DB row's. */
export const SESSION_MAX_AGE_S = Math.floor(SESSION_TTL_MS / 1000);

export function sessionCookieName(secure: boolean): string {
  return secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
}

let secretCache: { key: Buffer; secret: string } | undefined;

/**
 * next-auth's secret, derived from the vault key (BATON_SECRET, or data/secret.key) with HKDF under
 * its own label, so one secret configures Baton and the two uses never share a key.
 */
export function authSecret(): string {
  const key = getVaultKey();
  if (secretCache?.key !== key) {
    secretCache = {
      key,
      secret: Buffer.from(hkdfSync("sha256", key, "baton", "baton/next-auth/v1", 32)).toString("base64url"),
    };
  }
  return secretCache.secret;
}

export interface CookieEntry {
  name: string;
  value: string;
}

/** Parses a `Cookie:` request header (values percent-decoded where they are valid escapes). */
export function parseCookieHeader(header: string | null | undefined): CookieEntry[] {
  if (!header) return [];
  const out: CookieEntry[] = [];
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    try {
      value = decodeURIComponent(value);
    } catch {
      // keep it as sent
    }
    out.push({ name, value });
  }
  return out;
}

/** The session JWT from a cookie list: the secure name first, next-auth's chunks (`.0`, `.1`…) joined. */
function sessionJwt(cookies: Iterable<CookieEntry>): string | null {
  const list = [...cookies];
  for (const base of [SECURE_SESSION_COOKIE, SESSION_COOKIE]) {
    const whole = list.find((c) => c.name === base);
    if (whole?.value) return whole.value;
    const chunks = list
      .map((c) => ({ c, m: new RegExp(`^${base.replace(/[.]/g, "\\.")}\\.(\\d+)$`).exec(c.name) }))
      .filter((x): x is { c: CookieEntry; m: RegExpExecArray } => x.m !== null)
      .sort((a, b) => Number(a.m[1]) - Number(b.m[1]));
    if (chunks.length) return chunks.map((x) => x.c.value).join("");
  }
  return null;
}

// Decrypting the JWT is the costliest step of a session check (next-auth derives its key with HKDF
// on every decode, then AES-GCM): a browser sends the same cookie with every request, so the sid of
// a JWT that decrypted is kept, by the exact JWT string, until the JWT's own expiry. Only successes
// are kept (a forged cookie costs its sender a decryption each time, as before), under the secret
// they decrypted with (a new secret empties it), and the session row still decides every request.
const DECODED_MAX = 5_000;
interface Decoded {
  sid: string;
  /** The JWT's `exp`, in ms. */
  expiresAt: number;
}
const DECODED = Symbol.for("baton.session-cookie.decoded");
type DecodedCache = { secret: string; entries: Map<string, Decoded> };
const decodedHolder = globalThis as typeof globalThis & { [DECODED]?: DecodedCache };

function decodedCache(secret: string): Map<string, Decoded> {
  let cache = decodedHolder[DECODED];
  if (cache?.secret !== secret) decodedHolder[DECODED] = cache = { secret, entries: new Map() };
  return cache.entries;
}

/** The `sid` of a valid (decryptable, unexpired) session JWT among the cookies, else null. */
export async function readSessionId(cookies: Iterable<CookieEntry>, now = Date.now()): Promise<string | null> {
  const jwt = sessionJwt(cookies);
  if (!jwt || jwt.length > 8192) return null;
  const secret = authSecret();
  const cache = decodedCache(secret);
  const hit = cache.get(jwt);
  if (hit) {
    if (hit.expiresAt > now) return hit.sid;
    cache.delete(jwt);
    return null;
  }
  try {
    const payload = await decode({ token: jwt, secret });
    if (typeof payload?.sid !== "string") return null;
    if (typeof payload.exp === "number") {
      // Oldest first out: a Map iterates in insertion order.
      if (cache.size >= DECODED_MAX) cache.delete(cache.keys().next().value!);
      cache.set(jwt, { sid: payload.sid, expiresAt: payload.exp * 1000 });
    }
    return payload.sid;
  } catch {
    return null; // not ours, tampered with, encrypted under an older secret, or expired
  }
}

/** A session JWT exactly as next-auth's jwt callback produces it (for tests and tools). */
export async function encodeSessionJwt(sid: string, maxAgeSeconds = SESSION_MAX_AGE_S): Promise<string> {
  return encode({ token: { sid }, secret: authSecret(), maxAge: maxAgeSeconds });
}

/** `Set-Cookie` values that delete every session cookie the request carried (and the plain name). */
export function clearSessionCookies(cookies: Iterable<CookieEntry>, secure: boolean): string[] {
  const names = new Set([sessionCookieName(secure)]);
  for (const c of cookies)
    if (c.name.startsWith(SESSION_COOKIE) || c.name.startsWith(SECURE_SESSION_COOKIE)) names.add(c.name);
  return [...names].map(
    (name) =>
      `${name}=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; HttpOnly; SameSite=Lax${secure || name.startsWith("__Secure-") ? "; Secure" : ""}`,
  );
}

/** The `Set-Cookie` value of a session JWT, with next-auth's own attributes (HttpOnly, Lax, Path=/). */
export function sessionSetCookie(jwt: string, secure: boolean, maxAgeSeconds = SESSION_MAX_AGE_S): string {
  return [
    `${sessionCookieName(secure)}=${jwt}`,
    "Path=/",
    `Expires=${new Date(Date.now() + maxAgeSeconds * 1000).toUTCString()}`,
    "HttpOnly",
    "SameSite=Lax",
    ...(secure ? ["Secure"] : []),
  ].join("; ");
}
