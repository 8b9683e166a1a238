import "server-only";
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  FILE_LINK_DEFAULT_SECONDS,
  FILE_LINK_MAX_SECONDS,
  fileLinkExpiry,
  fileLinkQuery,
  signFileLink,
  verifyFileLink,
  type FileLinkClaims,
} from "./file-link-signature";

// Baton-signed file links (issue 23): every claim is covered by the signature, so a link signed for
// one method, team, sandbox, path, expiry, token or max_bytes is refused for any other.

const KEY = randomBytes(32);
const NOW = 1_800_000_000_000;
const EXP = NOW / 1000 + 300;
const GET: FileLinkClaims = {
  method: "GET",
  team: "team-a",
  sandboxId: "sbx_a",
  path: "/workspace/a.txt",
  exp: EXP,
  tokenId: "tok_1",
};
const PUT: FileLinkClaims = { ...GET, method: "PUT", maxBytes: 1024 };

const query = (claims: FileLinkClaims, key = KEY) => new URLSearchParams(fileLinkQuery(claims, key));
const check = (method: string, sandboxId: string, q: URLSearchParams, now = NOW) =>
  verifyFileLink(method, sandboxId, q, now, KEY);
function tampered(q: URLSearchParams, key: string, value: string): URLSearchParams {
  const next = new URLSearchParams(q);
  next.set(key, value);
  return next;
}

describe("signed file links", () => {
  it("verifies what it signed, HEAD as GET", () => {
    expect(check("GET", "sbx_a", query(GET))).toEqual({ ok: true, claims: { ...GET, maxBytes: null } });
    expect(check("HEAD", "sbx_a", query(GET)).ok).toBe(true);
    expect(check("PUT", "sbx_a", query(PUT))).toEqual({ ok: true, claims: PUT });
    expect(signFileLink(GET, KEY)).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each([
    ["path", "/workspace/b.txt"],
    ["path", "/workspace/a.txt/"],
    ["team", "team-b"],
    ["exp", String(EXP + 3600)],
    ["tok", "tok_2"],
    ["sig", "0".repeat(64)],
    ["sig", "not-hex"],
  ])("refuses a link whose %s was changed to %s", (key, value) => {
    expect(check("GET", "sbx_a", tampered(query(GET), key, value))).toEqual({
      ok: false,
      code: "invalid_signature",
    });
  });

  it("refuses it on another sandbox, for another method, or under another key", () => {
    expect(check("GET", "sbx_b", query(GET))).toMatchObject({ code: "invalid_signature" });
    // A download link never uploads, an upload link never downloads.
    expect(check("PUT", "sbx_a", query(GET))).toMatchObject({ code: "invalid_signature" });
    expect(check("GET", "sbx_a", query(PUT))).toMatchObject({ code: "invalid_signature" });
    expect(check("DELETE", "sbx_a", query(GET))).toMatchObject({ code: "invalid_signature" });
    expect(check("GET", "sbx_a", query(GET, randomBytes(32)))).toMatchObject({ code: "invalid_signature" });
  });

  it("binds a PUT's max_bytes: raised, dropped or added, the link is refused", () => {
    expect(check("PUT", "sbx_a", tampered(query(PUT), "max", "1025"))).toMatchObject({ code: "invalid_signature" });
    const dropped = query(PUT);
    dropped.delete("max");
    expect(check("PUT", "sbx_a", dropped)).toMatchObject({ code: "invalid_signature" });
    const unlimited: FileLinkClaims = { ...PUT, maxBytes: null };
    expect(check("PUT", "sbx_a", tampered(query(unlimited), "max", "99999"))).toMatchObject({
      code: "invalid_signature",
    });
  });

  it("refuses repeated, unknown or missing parameters", () => {
    const twice = query(GET);
    twice.append("path", "/workspace/b.txt");
    expect(check("GET", "sbx_a", twice)).toMatchObject({ code: "invalid_signature" });
    expect(check("GET", "sbx_a", tampered(query(GET), "extra", "1"))).toMatchObject({ code: "invalid_signature" });
    for (const k of ["path", "team", "exp", "tok", "sig"]) {
      const q = query(GET);
      q.delete(k);
      expect(check("GET", "sbx_a", q), k).toMatchObject({ code: "invalid_signature" });
    }
  });

  it("refuses an expired link with url_expired, only once its signature holds", () => {
    expect(check("GET", "sbx_a", query(GET), EXP * 1000)).toEqual({ ok: false, code: "url_expired" });
    expect(check("GET", "sbx_a", query(GET), EXP * 1000 - 1).ok).toBe(true);
    // A forged expiry is a bad signature, not an expired link.
    expect(check("GET", "sbx_a", tampered(query(GET), "exp", String(EXP - 600)))).toMatchObject({
      code: "invalid_signature",
    });
  });

  it("never signs a claim holding a line break (two claim sets must not share a text)", () => {
    expect(() => signFileLink({ ...GET, path: "/a\nGET" }, KEY)).toThrow();
    expect(check("GET", "sbx_a", tampered(query(GET), "path", "/a\nb"))).toMatchObject({ code: "invalid_signature" });
  });

  it("caps the expiry at an hour, defaulting to the contract's 300 s", () => {
    expect(fileLinkExpiry(undefined, NOW)).toBe(NOW / 1000 + FILE_LINK_DEFAULT_SECONDS);
    expect(fileLinkExpiry(60, NOW)).toBe(NOW / 1000 + 60);
    expect(fileLinkExpiry(604_800, NOW)).toBe(NOW / 1000 + FILE_LINK_MAX_SECONDS);
    expect(FILE_LINK_MAX_SECONDS).toBe(3600);
  });
});
