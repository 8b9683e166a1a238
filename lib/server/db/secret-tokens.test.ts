import "server-only";
import { describe, expect, it } from "vitest";
import { sha256 } from "../crypto";
import { newSecretToken, secretTokenHash } from "./secret-tokens";

describe("secret tokens (session cookies, invitation links)", () => {
  it("hands out 256-bit url-safe secrets and stores only their SHA-256", () => {
    const a = newSecretToken();
    expect(a.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.hash).toBe(sha256(a.token));
    expect(a.hash).not.toContain(a.token);
    expect(newSecretToken().token).not.toBe(a.token);
  });

  it("finds the stored hash of a presented secret, and nothing for what cannot be one", () => {
    const { token, hash } = newSecretToken();
    expect(secretTokenHash(token)).toBe(hash);
    for (const bad of [
      "",
      token.slice(1),
      `${token}x`,
      `${token.slice(0, 42)}=`,
      hash,
      "a".repeat(43).replace("a", "/"),
    ])
      expect(secretTokenHash(bad), bad).toBeNull();
  });
});
