import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { API_TOKEN_LENGTH, apiTokenHash, apiTokenHint, crc32, isWellFormedApiToken, newApiToken } from "./format";

describe("personal API token format", () => {
  it("is bat_ + 32 base62 characters + a 6-character checksum, stored as its SHA-256", () => {
    const { token, hash, hint } = newApiToken();
    expect(token).toMatch(/^bat_[0-9A-Za-z]{38}$/);
    expect(token).toHaveLength(API_TOKEN_LENGTH);
    expect(hash).toBe(createHash("sha256").update(token).digest("hex"));
    expect(hint).toBe(`bat_…${token.slice(-4)}`);
    expect(apiTokenHint(token)).toBe(hint);
    expect(isWellFormedApiToken(token)).toBe(true);
    expect(apiTokenHash(token)).toBe(hash);
  });

  it("is different every time (no two of 500 alike, every base62 character used)", () => {
    const tokens = Array.from({ length: 500 }, () => newApiToken().token);
    expect(new Set(tokens).size).toBe(500);
    const chars = new Set(tokens.flatMap((t) => [...t.slice(4, 36)]));
    expect(chars.size).toBe(62);
  });

  it("refuses a token whose checksum does not match, before any lookup", () => {
    const { token } = newApiToken();
    const i = 10;
    const flipped = token.slice(0, i) + (token[i] === "a" ? "b" : "a") + token.slice(i + 1);
    expect(isWellFormedApiToken(flipped)).toBe(false);
    expect(apiTokenHash(flipped)).toBeNull();
    const badSum = token.slice(0, -1) + (token.endsWith("0") ? "1" : "0");
    expect(isWellFormedApiToken(badSum)).toBe(false);
  });

  it("refuses other shapes", () => {
    const { token } = newApiToken();
    for (const bad of [
      "",
      "bat_",
      token.slice(0, -1),
      `${token}x`,
      token.replace("bat_", "ork_"),
      `bat_${"-".repeat(38)}`,
    ])
      expect(isWellFormedApiToken(bad), bad).toBe(false);
  });

  it("computes CRC-32 as zlib does", () => {
    expect(crc32("")).toBe(0);
    expect(crc32("123456789")).toBe(0xcbf43926);
  });
});
