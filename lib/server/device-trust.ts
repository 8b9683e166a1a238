import "server-only";
import { createHmac, hkdfSync, randomBytes } from "node:crypto";
import { getVaultKey, safeEqual } from "./crypto";
import { normalizeEmail } from "./db/users";

// Device cookies (OWASP, "Slow Down Online Guessing Attacks with Device Cookies"): a browser that
// has signed in to an account gets a signed cookie naming that account. Sign-in attempts that
// present it are not counted against the account's per-email limit (they get a limit of their own
// per device), so a stranger hammering the owner's address locks out strangers only: the owner's
// own browser still signs in with the right password. Attempts without it keep the per-email
// limit, so the limit still stops guessing from many addresses (which letting any right password
// through would not: a botnet's one right guess would pass).
//
// Stateless: `<device id>.<HMAC-SHA256(key, email, device id)>`, the key derived (HKDF) from the
// vault key under its own label. It proves only "this browser signed in to this address before";
// the password is still checked.

export const DEVICE_COOKIE = "baton-device";
export const SECURE_DEVICE_COOKIE = "__Secure-baton-device";
/** Sent only with sign-in attempts: nowhere else needs it. */
export const DEVICE_COOKIE_PATH = "/api/auth/login";
export const DEVICE_COOKIE_MAX_AGE_S = 365 * 24 * 60 * 60;

const TOKEN_SHAPE = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

let keyCache: { vault: Buffer; key: Buffer } | undefined;
function deviceKey(): Buffer {
  const vault = getVaultKey();
  if (keyCache?.vault !== vault)
    keyCache = { vault, key: Buffer.from(hkdfSync("sha256", vault, "baton", "baton/device-cookie/v1", 32)) };
  return keyCache.key;
}

const mac = (email: string, deviceId: string) =>
  createHmac("sha256", deviceKey())
    .update(`device:v1\n${normalizeEmail(email)}\n${deviceId}`)
    .digest("base64url");

/** A new device token for a browser that just signed in to `email`. */
export function issueDeviceToken(email: string): string {
  const deviceId = randomBytes(16).toString("base64url");
  return `${deviceId}.${mac(email, deviceId)}`;
}

/** The device id of a token issued for `email`, or null (missing, malformed, forged, or another account's). */
export function verifyDeviceToken(token: string | null | undefined, email: string): string | null {
  const m = TOKEN_SHAPE.exec(token ?? "");
  if (!m) return null;
  const [, deviceId, signature] = m as unknown as [string, string, string];
  return safeEqual(signature, mac(email, deviceId)) ? deviceId : null;
}

/** The device token a request's Cookie header carries (either cookie name), or null. */
export function readDeviceToken(cookieHeader: string | null | undefined): string | null {
  const values = new Map<string, string>();
  for (const part of (cookieHeader ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0) values.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return values.get(SECURE_DEVICE_COOKIE) ?? values.get(DEVICE_COOKIE) ?? null;
}

/** The Set-Cookie value for a device token: HttpOnly, SameSite=Strict, only on the sign-in route. */
export function deviceCookie(token: string, secure: boolean): string {
  return [
    `${secure ? SECURE_DEVICE_COOKIE : DEVICE_COOKIE}=${token}`,
    `Path=${DEVICE_COOKIE_PATH}`,
    `Max-Age=${DEVICE_COOKIE_MAX_AGE_S}`,
    "HttpOnly",
    "SameSite=Strict",
    ...(secure ? ["Secure"] : []),
  ].join("; ");
}
