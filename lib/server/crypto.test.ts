import "server-only";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  CryptoError,
  decrypt,
  deriveKey,
  encrypt,
  getVaultKey,
  hashPassword,
  loadOrCreateKeyFile,
  needsRehash,
  randomToken,
  safeEqual,
  sha256,
  tokenHint,
  verifyPassword,
} from "./crypto";
import { resetEnvForTests } from "./env";

let dataDir: string;

function useEnv(vars: Record<string, string | undefined>): void {
  vi.unstubAllEnvs();
  vi.stubEnv("BATON_DATA_DIR", dataDir);
  vi.stubEnv("BATON_SECRET", undefined);
  vi.stubEnv("DATABASE_URL", undefined);
  for (const [k, v] of Object.entries(vars)) vi.stubEnv(k, v);
  resetEnvForTests();
}

beforeEach(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-crypto-"));
  useEnv({});
});

afterEach(() => {
  vi.unstubAllEnvs();
  resetEnvForTests();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe("AES-256-GCM", () => {
  it("round-trips text, including empty and non-ASCII strings", () => {
    useEnv({ BATON_SECRET: "s".repeat(40) });
    for (const text of ["ork_abcdefghijklmnop", "", "🔐 Grüße", "x".repeat(10_000)]) {
      const enc = encrypt(text);
      expect(enc).toMatch(/^v1:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]*$/);
      expect(enc).not.toContain(text || "\u0000");
      expect(decrypt(enc)).toBe(text);
    }
  });

  it("uses a fresh IV every time", () => {
    const a = encrypt("same");
    const b = encrypt("same");
    expect(a).not.toBe(b);
    expect(decrypt(a)).toBe(decrypt(b));
  });

  it("detects tampering with the ciphertext, tag or IV", () => {
    const enc = encrypt("ork_secret_token_value");
    const [v, iv, tag, ct] = enc.split(":") as [string, string, string, string];
    const flip = (s: string) => {
      const buf = Buffer.from(s, "base64url");
      buf[0] = (buf[0] ?? 0) ^ 1;
      return buf.toString("base64url");
    };
    for (const bad of [
      [v, iv, tag, flip(ct)],
      [v, iv, flip(tag), ct],
      [v, flip(iv), tag, ct],
    ]) {
      expect(() => decrypt(bad.join(":"))).toThrow(/authentication failed.*tampered/);
    }
  });

  it("rejects malformed values and unknown versions with clear errors", () => {
    expect(() => decrypt("plaintext")).toThrow(CryptoError);
    expect(() => decrypt("plaintext")).toThrow(/not in the v1:<iv>:<tag>:<ciphertext> format/);
    const enc = encrypt("x");
    expect(() => decrypt(enc.replace(/^v1:/, "v2:"))).toThrow(/unsupported format version "v2"/);
    expect(() => decrypt(enc.replace(/^v1:[^:]+:/, "v1:AAAA:"))).toThrow(/wrong length/);
  });

  it("binds a ciphertext to its associated data", () => {
    const enc = encrypt("ork_token_for_row_a", { aad: "row:a" });
    expect(decrypt(enc, { aad: "row:a" })).toBe("ork_token_for_row_a");
    expect(() => decrypt(enc, { aad: "row:b" })).toThrow(/authentication failed/);
    expect(() => decrypt(enc)).toThrow(/authentication failed/);
  });

  it("fails with another BATON_SECRET (wrong key)", () => {
    useEnv({ BATON_SECRET: "a".repeat(64) });
    const enc = encrypt("ork_token");
    useEnv({ BATON_SECRET: "b".repeat(64) });
    expect(() => decrypt(enc)).toThrow(/different key/);
    useEnv({ BATON_SECRET: "a".repeat(64) });
    expect(decrypt(enc)).toBe("ork_token");
  });

  it("fails with an explicitly passed wrong key", () => {
    const k1 = Buffer.alloc(32, 1);
    const k2 = Buffer.alloc(32, 2);
    const enc = encrypt("t", { key: k1 });
    expect(decrypt(enc, { key: k1 })).toBe("t");
    expect(() => decrypt(enc, { key: k2 })).toThrow(CryptoError);
    expect(() => encrypt("t", { key: Buffer.alloc(16) })).toThrow(/32-byte key/);
  });
});

describe("vault key", () => {
  it("uses a 32-byte BATON_SECRET as the key and HKDF-derives any other length", () => {
    const raw = Buffer.alloc(32, 9);
    useEnv({ BATON_SECRET: raw.toString("hex") });
    expect(getVaultKey()).toEqual(raw);
    useEnv({ BATON_SECRET: "p".repeat(50) });
    const derived = getVaultKey();
    expect(derived).toHaveLength(32);
    expect(derived).toEqual(deriveKey(Buffer.from("p".repeat(50))));
    expect(derived.equals(Buffer.from("p".repeat(50)).subarray(0, 32))).toBe(false);
    expect(fs.existsSync(path.join(dataDir, "secret.key"))).toBe(false);
  });

  it("generates secret.key once (0600) in the data dir and reuses it", () => {
    const file = path.join(dataDir, "secret.key");
    expect(fs.existsSync(file)).toBe(false);
    const enc = encrypt("ork_persisted_token");
    expect(fs.existsSync(file)).toBe(true);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const content = fs.readFileSync(file, "utf8");

    // A "restart": the env and key caches are rebuilt, the same file is read back.
    useEnv({});
    expect(decrypt(enc)).toBe("ork_persisted_token");
    expect(fs.readFileSync(file, "utf8")).toBe(content);
    expect(loadOrCreateKeyFile(dataDir)).toEqual(getVaultKey());
    expect(fs.readdirSync(dataDir)).toEqual(["secret.key"]);
  });

  it("creates the data dir when missing", () => {
    const nested = path.join(dataDir, "a", "b");
    const key = loadOrCreateKeyFile(nested);
    expect(key).toHaveLength(32);
    expect(loadOrCreateKeyFile(nested)).toEqual(key);
  });

  it("a different data dir means a different key: decrypting fails clearly", () => {
    const enc = encrypt("ork_token");
    const other = fs.mkdtempSync(path.join(os.tmpdir(), "baton-crypto-other-"));
    try {
      vi.stubEnv("BATON_DATA_DIR", other);
      resetEnvForTests();
      expect(() => decrypt(enc)).toThrow(/authentication failed/);
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
  });

  it("refuses a corrupt secret.key instead of silently replacing it", () => {
    fs.writeFileSync(path.join(dataDir, "secret.key"), "not-a-key\n", { mode: 0o600 });
    expect(() => encrypt("x")).toThrow(/secret.key is corrupt/);
    expect(fs.readFileSync(path.join(dataDir, "secret.key"), "utf8")).toBe("not-a-key\n");
  });
});

describe("scrypt passwords", () => {
  it("hashes in the scrypt$N$r$p$salt$hash format and verifies", async () => {
    const h = await hashPassword("correct horse battery staple");
    expect(h).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(await verifyPassword("correct horse battery staple", h)).toBe(true);
    expect(await verifyPassword("correct horse battery stapl", h)).toBe(false);
    expect(await verifyPassword("", h)).toBe(false);
    expect(needsRehash(h)).toBe(false);
  });

  it("salts every hash", async () => {
    const [a, b] = await Promise.all([hashPassword("pw"), hashPassword("pw")]);
    expect(a).not.toBe(b);
  });

  it("treats Unicode-equivalent passwords alike (NFC)", async () => {
    const h = await hashPassword("caf\u00e9");
    expect(await verifyPassword("cafe\u0301", h)).toBe(true);
  });

  it("verifies hashes made with older parameters and asks for a rehash", async () => {
    const { scryptSync, randomBytes } = await import("node:crypto");
    const salt = randomBytes(16);
    const hash = scryptSync("old-password", salt, 32, { N: 2 ** 14, r: 8, p: 1 });
    const old = `scrypt$16384$8$1$${salt.toString("base64").replace(/=+$/, "")}$${hash.toString("base64").replace(/=+$/, "")}`;
    expect(await verifyPassword("old-password", old)).toBe(true);
    expect(await verifyPassword("wrong", old)).toBe(false);
    expect(needsRehash(old)).toBe(true);
  });

  it("returns false for malformed or hostile stored hashes", async () => {
    for (const bad of [
      "",
      "bcrypt$2b$10$abc",
      "scrypt$32768$8$1$salt",
      "scrypt$1000$8$1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA", // N not a power of two
      `scrypt$${2 ** 24}$8$1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA`, // N too large (memory)
    ]) {
      expect(await verifyPassword("pw", bad)).toBe(false);
      expect(needsRehash(bad)).toBe(true);
    }
  });

  it("spends a real scrypt on unknown users (null hash) and says no", async () => {
    const t0 = performance.now();
    expect(await verifyPassword("anything", null)).toBe(false);
    expect(performance.now() - t0).toBeGreaterThan(5);
  });
});

describe("tokens and hashes", () => {
  it("tokenHint shows only the prefix and the last four characters", () => {
    expect(tokenHint("ork_AbCdEfGhIjKlMnOpQrStUvWxabcd")).toBe("ork_…abcd");
    expect(tokenHint("sp_live_0123456789abcdefWXYZ")).toBe("sp_…WXYZ");
    expect(tokenHint("plainsecretvalue1234")).toBe("…1234");
    expect(tokenHint("ork_short")).toBe("ork_…");
  });

  it("random tokens are url-safe and unique, 256 bits unless asked otherwise", () => {
    const t = randomToken();
    expect(t).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(randomToken()).not.toBe(t);
    expect(randomToken(16)).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it("sha256 is lowercase hex and safeEqual compares exactly", () => {
    expect(sha256("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(sha256(Buffer.from("abc"))).toBe(sha256("abc"));
    expect(safeEqual("abc", "abc")).toBe(true);
    expect(safeEqual("abc", "abd")).toBe(false);
    expect(safeEqual("abc", "abcd")).toBe(false);
  });
});
