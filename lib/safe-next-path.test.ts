import { describe, expect, it } from "vitest";
import { nextPathFromSearch, safeNextPath } from "./safe-next-path";

// Every way a `next` value has been seen to leave the site: each must come back null (server) or
// as the fallback (the login form, which reads it from location.search, decoded once).
const ESCAPES = [
  "//evil.example",
  "/\\evil.example",
  "\\/evil.example",
  "/\t/evil.example",
  "/\n/evil.example",
  "/\r\n/evil.example",
  "/%09/evil.example", // as the path itself (a double-encoded ?next=)
  "/%2F%2Fevil.example",
  "/%2f/evil.example",
  "/%5Cevil.example",
  "/%5cevil.example",
  "/%5C%5Cevil.example",
  "/x\\..\\..\\/evil.example",
  "/\u0000/evil.example",
  "/\u007f/evil.example",
  "https://evil.example",
  "http:/evil.example",
  "javascript:alert(1)",
  "JaVaScRiPt:alert(1)",
  " /sandboxes",
  "sandboxes",
  "%2F%2Fevil.example",
  "/%E0%A4%A", // a malformed escape
  "",
];

describe("safeNextPath (the one check for server and client)", () => {
  it("keeps same-origin paths with their query and fragment", () => {
    expect(safeNextPath("/sandboxes?status=running&q=a%2Fb#top")).toBe("/sandboxes?status=running&q=a%2Fb#top");
    expect(safeNextPath("/sandboxes/sbx_1/files?path=%2Fworkspace%5Ca")).toBe(
      "/sandboxes/sbx_1/files?path=%2Fworkspace%5Ca",
    );
    expect(safeNextPath("/a/../volumes")).toBe("/volumes");
    expect(safeNextPath("/")).toBe("/");
  });

  it.each(ESCAPES)("refuses %j", (value) => {
    expect(safeNextPath(value)).toBeNull();
  });

  it("refuses non-strings and absurdly long values", () => {
    expect(safeNextPath(null)).toBeNull();
    expect(safeNextPath(undefined)).toBeNull();
    expect(safeNextPath(`/${"a".repeat(3000)}`)).toBeNull();
  });
});

describe("the login form's ?next= (components/auth/login-form.tsx)", () => {
  it("reads it from the query string, decoded once, through the same check", () => {
    expect(nextPathFromSearch("?next=%2Fvolumes", "/sandboxes")).toBe("/volumes");
    // The reported open redirect: %09 decodes to a tab, which the browser then drops: //evil.example.
    expect(nextPathFromSearch("?next=/%09/evil.example", "/sandboxes")).toBe("/sandboxes");
    for (const search of [
      "?next=//evil.example",
      "?next=/%5Cevil.example",
      "?next=%2F%2Fevil.example",
      "?next=/%0D%0A/evil.example",
      "?next=javascript:alert(1)",
      "?next=https://evil.example",
      "?next=/%252F%252Fevil.example",
    ]) {
      expect(nextPathFromSearch(search, "/sandboxes"), search).toBe("/sandboxes");
    }
    for (const value of ESCAPES)
      expect(nextPathFromSearch(`?next=${encodeURIComponent(value)}`, "/sandboxes"), value).toBe("/sandboxes");
    expect(nextPathFromSearch("", "/sandboxes")).toBe("/sandboxes");
  });
});
