import "server-only";
import { randomBytes } from "node:crypto";
import { generate, generateSecret, generateURI, verify } from "otplib";
import QRCode from "qrcode";

// TOTP (RFC 6238) with otplib: SHA-1, 6 digits, 30-second steps, as every authenticator app reads
// an otpauth:// URI. A code is accepted one step either side of now (clock drift), and only for a
// time step newer than the last one accepted (`afterStep`), so the same code cannot be used twice.

export const TOTP_ISSUER = "Baton";
export const TOTP_PERIOD_S = 30;
/** ±1 step around now. */
export const TOTP_TOLERANCE_S = TOTP_PERIOD_S;
export const TOTP_CODE = /^\d{6}$/;

/** A new base32 secret (20 random bytes, 160 bits: RFC 4226's recommended length). */
export function newTotpSecret(): string {
  return generateSecret({ length: 20 });
}

/** The otpauth:// URI an authenticator app reads (from the QR code, or typed in as the key). */
export function totpUri(secret: string, account: string): string {
  return generateURI({ issuer: TOTP_ISSUER, label: account, secret, period: TOTP_PERIOD_S });
}

/** The QR code of an otpauth:// URI as an SVG data URL, drawn here on the server (no image service). */
export async function totpQrDataUrl(uri: string): Promise<string> {
  const svg = await QRCode.toString(uri, { type: "svg", errorCorrectionLevel: "M", margin: 2 });
  return `data:image/svg+xml;base64,${Buffer.from(svg, "utf8").toString("base64")}`;
}

/** The current code of a secret (tests, and nothing else in the product). */
export function totpCode(secret: string, epochSeconds = Math.floor(Date.now() / 1000)): Promise<string> {
  return generate({ secret, epoch: epochSeconds, period: TOTP_PERIOD_S });
}

/**
 * The time step a code is valid for (now ±1 step), newer than `afterStep`; null when the code is
 * wrong, malformed, too old, or was already used (its step is not newer than `afterStep`).
 */
export async function matchTotp(
  secret: string,
  code: string,
  opts: { afterStep?: number | null; epochSeconds?: number } = {},
): Promise<number | null> {
  const token = code.replace(/\s+/g, "");
  if (!TOTP_CODE.test(token)) return null;
  try {
    const result = await verify({
      secret,
      token,
      period: TOTP_PERIOD_S,
      epoch: opts.epochSeconds ?? Math.floor(Date.now() / 1000),
      epochTolerance: TOTP_TOLERANCE_S,
      ...(opts.afterStep !== null && opts.afterStep !== undefined ? { afterTimeStep: opts.afterStep } : {}),
    });
    return result.valid && "timeStep" in result ? result.timeStep : null;
  } catch {
    return null;
  }
}

// Recovery codes: ten, each 12 characters from an alphabet without look-alikes (60 bits), shown
// as xxxx-xxxx-xxxx. Only their sha256 is stored; each works once.
const ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"; // 31 letters and digits, no i, l, o, 0, 1
export const RECOVERY_CODE_COUNT = 10;
export const RECOVERY_CODE = /^[a-z0-9]{4}-?[a-z0-9]{4}-?[a-z0-9]{4}$/;

export function newRecoveryCodes(count = RECOVERY_CODE_COUNT): string[] {
  return Array.from({ length: count }, () => {
    const bytes = randomBytes(24);
    let s = "";
    for (const b of bytes) {
      if (b >= 248) continue; // 248 = 8 × 31: keeps the letters uniform
      s += ALPHABET[b % ALPHABET.length];
      if (s.length === 12) break;
    }
    while (s.length < 12) s += ALPHABET[randomBytes(1)[0]! % ALPHABET.length];
    return `${s.slice(0, 4)}-${s.slice(4, 8)}-${s.slice(8, 12)}`;
  });
}

/** The stored form of a recovery code as typed: trimmed, lowercase, dashes and spaces dropped. */
export function normalizeRecoveryCode(code: string): string | null {
  const c = code
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, "");
  return /^[a-z0-9]{12}$/.test(c) ? c : null;
}
