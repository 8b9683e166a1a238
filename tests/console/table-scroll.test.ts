import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

// Every table the console draws sits in <TableScroll> (components/ui/table.tsx), whose box is
// positioned: a table in a bare `overflow-x-auto` box let its screen-reader-only "Actions" header
// escape and widen the whole page on a phone (e2e/resource-lists-phone.spec.ts sees the pixels).

const ROOT = path.resolve(import.meta.dirname, "../..");

function sources(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(rel);
    return entry.name.endsWith(".tsx") ? [rel] : [];
  });
}

/** Whether the `<table` at `at` is the first element inside a `<TableScroll …>`: no other tag between them. */
function directlyInTableScroll(source: string, at: number): boolean {
  const before = source.slice(0, at);
  const open = before.lastIndexOf("<TableScroll");
  return open >= 0 && !/<\/?[A-Za-z]/.test(before.slice(open + 1));
}

describe("tables", () => {
  const files = [...sources("components"), ...sources("app")].filter((f) =>
    /<table\b/.test(fs.readFileSync(path.join(ROOT, f), "utf8")),
  );

  it("are found (the scan sees the console's tables)", () => {
    expect(files.length).toBeGreaterThanOrEqual(8);
  });

  it.each(files)("%s puts each table directly in <TableScroll>", (file) => {
    const source = fs.readFileSync(path.join(ROOT, file), "utf8");
    for (const m of source.matchAll(/<table\b/g)) expect(directlyInTableScroll(source, m.index), file).toBe(true);
  });
});
