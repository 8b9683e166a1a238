import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * lib/orkestr also runs in the browser (against Baton's own /api): its runtime modules must not
 * reach for Node-only APIs or for lib/server.
 */
const ROOT = path.dirname(fileURLToPath(import.meta.url));

function runtimeModules(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) return d.name === "testing" ? [] : runtimeModules(p);
    return d.name.endsWith(".ts") && !d.name.endsWith(".test.ts") ? [p] : [];
  });
}

describe("lib/orkestr is isomorphic", () => {
  const files = runtimeModules(ROOT);

  it("has runtime modules to check", () => {
    expect(files.length).toBeGreaterThan(20);
  });

  it.each(files.map((f) => [path.relative(ROOT, f), f]))(
    "%s uses no Node-only API and no lib/server",
    (_name, file) => {
      const code = fs
        .readFileSync(file, "utf8")
        .replace(/\/\*[\s\S]*?\*\//g, "")
        .replace(/^\s*\/\/.*$/gm, "");
      expect(code).not.toMatch(
        /from\s+["']node:|require\(|from\s+["'](fs|path|http|https|net|crypto|stream|buffer|url)["']/,
      );
      expect(code).not.toMatch(/\bBuffer\.|\bprocess\.|__dirname/);
      expect(code).not.toMatch(/lib\/server|\.\.\/server\//);
      expect(code).not.toMatch(/["']server-only["']/);
    },
  );
});
