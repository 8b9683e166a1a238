import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { TONE_CLASS } from "../../components/ui/tone";

// Read as text: the root tsconfig (NodeNext, no JSX) type-checks tests, and these are .tsx modules.
const source = (name: string) => readFileSync(new URL(`../../components/ui/${name}.tsx`, import.meta.url), "utf8");

describe("one tone map", () => {
  it("Badge's tone variants are the map itself", () => {
    expect(source("badge")).toMatch(/import \{ TONE_CLASS \} from "\.\/tone";[\s\S]*\.\.\.TONE_CLASS,/);
  });

  it("Alert writes out the same classes for its tones (it may not import the map: see alert.tsx)", () => {
    const alert = source("alert");
    for (const tone of ["success", "warning", "destructive"] as const)
      expect(alert, tone).toMatch(new RegExp(`${tone}:\\s*"${TONE_CLASS[tone].replace(/[/.]/g, "\\$&")}[ "]`));
  });
});
