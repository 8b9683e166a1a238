import { describe, expect, it } from "vitest";
import { decodeText, invalidName, joinPath, normalizeEntries, parentPath, shellQuote } from "./files";

describe("paths", () => {
  it("joins and splits without doubled slashes", () => {
    expect(joinPath("/workspace/", "a.txt")).toBe("/workspace/a.txt");
    expect(joinPath("/", "workspace")).toBe("/workspace");
    expect(parentPath("/workspace/a/b.txt")).toBe("/workspace/a");
    expect(parentPath("/workspace")).toBe("/");
  });

  it("refuses names that would create something else than one entry in the folder", () => {
    expect(invalidName("src")).toBeNull();
    expect(invalidName("  ")).toMatch(/Enter/);
    expect(invalidName("a/b")).toMatch(/\//);
    expect(invalidName("..")).toMatch(/\.\./);
    expect(invalidName("x".repeat(256))).toMatch(/255/);
  });

  it("quotes for the shell, quotes inside included", () => {
    expect(shellQuote("/workspace/it's here")).toBe(`'/workspace/it'\\''s here'`);
  });
});

describe("normalizeEntries", () => {
  it("reads is_dir or type, fills paths, puts folders first", () => {
    const out = normalizeEntries("/workspace", [
      { name: "b.txt", is_dir: false, size: 3 },
      { name: "src", type: "directory" },
      { name: "a.txt", path: "/workspace/a.txt", is_dir: false, size: 1, modified_at: "2025-01-01T00:00:00Z" },
    ]);
    expect(out.map((e) => [e.name, e.path, e.isDir])).toEqual([
      ["src", "/workspace/src", true],
      ["a.txt", "/workspace/a.txt", false],
      ["b.txt", "/workspace/b.txt", false],
    ]);
  });
});

describe("decodeText", () => {
  it("decodes UTF-8 text and refuses binary", () => {
    expect(decodeText(new TextEncoder().encode("héllo\n"))).toBe("héllo\n");
    expect(decodeText(new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0x00]))).toBeNull();
    expect(decodeText(new Uint8Array([0xff, 0xfe, 0x41]))).toBeNull();
  });
});
