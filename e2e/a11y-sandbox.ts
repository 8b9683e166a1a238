import fs from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "@playwright/test";

// axe-core in the page under test. @axe-core/playwright needs Node 22, so the library's own source
// is evaluated in the page (over the DevTools protocol, which the page's CSP does not govern).
const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** Serious and critical axe violations on the page as it is now, one line each (empty when clean). */
export async function seriousAxeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[]; html: string }[] }[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.slice(0, 5).map((n) => `${JSON.stringify(n.target)} ${n.html.slice(0, 160)}`).join(", ")})`);
  });
}

/**
 * The detail frame links (and Next prefetches) the Terminal, Files and Previews tabs, which are
 * built on other branches of issue 6: until they are merged those prefetches answer 404.
 */
export function isSiblingTabPrefetch(status: number, url: string): boolean {
  return status === 404 && /\/sandboxes\/[^/]+\/(terminal|files|previews)$/.test(new URL(url).pathname);
}
