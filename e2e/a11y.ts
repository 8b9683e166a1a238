import fs from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "@playwright/test";

// axe-core in the page under test. @axe-core/playwright needs Node 22, so the library's own source
// is evaluated in the page (over the DevTools protocol, which the page's CSP does not govern).
const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/**
 * Serious and critical axe violations on the page as it is now, one line each (empty when clean).
 * `scope` limits the check to the first element matching a selector (e.g. "main").
 * Finite animations and transitions are let finish first: a toast sliding in at half opacity is
 * not a contrast failure, and axe would measure it as one. The same holds for the colour transitions a
 * light/dark switch starts.
 */
export async function seriousAxeViolations(page: Page, { scope }: { scope?: string } = {}): Promise<string[]> {
  await page.evaluate(async () => {
    // The theme follows prefers-color-scheme in script (a media-query change event, then a class
    // on <html>): two frames let that land, so the colour transitions it starts are seen below.
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const finite = document.getAnimations().filter((a) => {
      const timing = a.effect?.getComputedTiming();
      return timing !== undefined && Number.isFinite(timing.endTime as number);
    });
    await Promise.race([Promise.allSettled(finite.map((a) => a.finished)), new Promise((r) => setTimeout(r, 2_000))]);
  });
  await page.evaluate(AXE_SOURCE);
  return page.evaluate(async (selector) => {
    const axe = (
      window as unknown as {
        axe: {
          run: (
            ctx: Element | Document,
            opts: object,
          ) => Promise<{
            violations: {
              id: string;
              impact: string | null;
              help: string;
              nodes: { target: unknown[]; html: string }[];
            }[];
          }>;
        };
      }
    ).axe;
    const context = selector ? document.querySelector(selector) : document;
    if (!context) return [`nothing on the page matches ${selector}`];
    const result = await axe.run(context, { resultTypes: ["violations"] });
    return result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map(
        (v) =>
          `${v.impact} ${v.id}: ${v.help} (${v.nodes
            .slice(0, 5)
            .map((n) => `${JSON.stringify(n.target)} ${n.html.slice(0, 160)}`)
            .join(", ")})`,
      );
  }, scope);
}
