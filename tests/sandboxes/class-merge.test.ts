import fs from "node:fs";
import path from "node:path";
import { twMerge } from "tailwind-merge";
import { describe, expect, it } from "vitest";
import { mergeClasses } from "../../lib/class-merge";

// Baton's small tailwind-merge config against the full one, on what the code base really merges:
// every class string of the primitives (components/ui: base classes, variants) followed by every
// className="…" written anywhere in components/ and app/. Any difference is a real override that
// would now resolve differently, so the config must grow a group.
const ROOT = path.resolve(import.meta.dirname, "../..");

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith(".test.ts") ? [p] : [];
  });
}

const literals = (file: string) =>
  [...fs.readFileSync(file, "utf8").matchAll(/"([^"\n]*)"/g)]
    .map((m) => m[1]!)
    .filter((s) => /^[a-z![-][\w\s:/[\]().%&>*#,=!-]*$/.test(s) && s.includes("-"));
const classNames = (file: string) =>
  [...fs.readFileSync(file, "utf8").matchAll(/className=(?:"([^"]*)"|\{cn\("([^"]*)")/g)].map((m) => (m[1] ?? m[2])!);

/** Every quoted string inside a cn(…) call: the classes merged with one another at run time. */
const cnArguments = (file: string) =>
  [...fs.readFileSync(file, "utf8").matchAll(/\bcn\(([^;]*?)\)[;,}\s]/gs)].flatMap((m) =>
    [...m[1]!.matchAll(/"([^"\n]*)"/g)].map((q) => q[1]!),
  );

const allFiles = [...sourceFiles(path.join(ROOT, "components")), ...sourceFiles(path.join(ROOT, "app"))];
const primitives = [
  ...new Set([...sourceFiles(path.join(ROOT, "components/ui")).flatMap(literals), ...allFiles.flatMap(cnArguments)]),
];
const overrides = [...new Set([...allFiles.flatMap(classNames), ...allFiles.flatMap(cnArguments)])];

describe("the small tailwind-merge config", () => {
  it("finds the class strings to compare", () => {
    expect(primitives.length).toBeGreaterThan(30);
    expect(overrides.length).toBeGreaterThan(200);
  });

  it("merges every primitive class string with every className in the code as the full twMerge does", () => {
    const differences: string[] = [];
    for (const base of primitives) {
      for (const extra of overrides) {
        const input = `${base} ${extra}`;
        const ours = mergeClasses(input);
        const full = twMerge(input);
        if (ours !== full) differences.push(`${input}\n    ours: ${ours}\n    full: ${full}`);
      }
    }
    expect(differences.slice(0, 6), `${differences.length} differences`).toEqual([]);
  });

  it("resolves the overrides the primitives rely on", () => {
    expect(mergeClasses("h-9 px-4 py-2 text-sm h-8 px-3 text-xs")).toBe("py-2 h-8 px-3 text-xs");
    expect(mergeClasses("px-4 py-2 p-0")).toBe("p-0");
    expect(mergeClasses("bg-primary text-primary-foreground bg-transparent text-destructive")).toBe(
      "bg-transparent text-destructive",
    );
    expect(mergeClasses("text-sm text-muted-foreground")).toBe("text-sm text-muted-foreground");
    expect(mergeClasses("flex hidden md:flex")).toBe("hidden md:flex");
    expect(mergeClasses("border border-input border-0")).toBe("border-input border-0");
    expect(mergeClasses("size-9 w-full")).toBe("size-9 w-full");
    expect(mergeClasses("w-full h-4 size-9")).toBe("size-9");
    expect(mergeClasses("hover:bg-accent bg-card hover:bg-muted")).toBe("bg-card hover:bg-muted");
  });
});
