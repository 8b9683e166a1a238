import fs from "node:fs";
import path from "node:path";
import type { Page } from "@playwright/test";
import { SCREENS_DIR, expect } from "./fixtures";

/** Collects uncaught page errors, console errors (hydration mismatches included), HTTP ≥ 400 and CSP violations. */
export function watchForErrors(
  page: Page,
  opts: { allowStatus?: (status: number, url: string) => boolean } = {},
): string[] {
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() !== "error") return;
    // The browser logs every 4xx fetch as a console error; those are judged by the response rule below.
    if (opts.allowStatus && /the server responded with a status of \d+/.test(message.text())) return;
    problems.push(`console.error: ${message.text()}`);
  });
  page.on("response", (response) => {
    if (response.status() < 400) return;
    if (opts.allowStatus?.(response.status(), response.url())) return;
    problems.push(`HTTP ${response.status()}: ${response.request().method()} ${response.url()}`);
  });
  void page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) => {
      console.error(`CSP violation: ${event.violatedDirective} blocked ${event.blockedURI || "inline"}`);
    });
  });
  return problems;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENS_DIR, { recursive: true });
  // A full-page capture keeps the viewport's height, so a sticky, viewport-high sidebar would end
  // mid-picture: grow the viewport to the page for the shot (as a tall window shows it), then restore.
  const viewport = page.viewportSize();
  // From the top: a focused terminal or a clicked row may have scrolled the page, and a capture of
  // a scrolled page with a sticky header paints the header over the wrong rows.
  const height = await page.evaluate(() => {
    window.scrollTo(0, 0);
    return document.documentElement.scrollHeight;
  });
  if (viewport && height > viewport.height) {
    await page.setViewportSize({ width: viewport.width, height });
    // Let the resize reach layout (dvh-high elements) before the capture.
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  }
  // Transitions finished: a screenshot right after a theme switch shows the final colours.
  await page.screenshot({ path: path.join(SCREENS_DIR, `${name}.png`), fullPage: true, animations: "disabled" });
  if (viewport && height > viewport.height) await page.setViewportSize(viewport);
}

/** Fills and submits the login form (the page must be on /login). */
export async function submitLogin(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel("Email", { exact: true }).fill(email);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** Goes to /login (optionally ?next=), signs in through the form and waits to leave the page. */
export async function signInThroughForm(page: Page, email: string, password: string): Promise<void> {
  if (!new URL(page.url(), "http://x").pathname.startsWith("/login")) await page.goto("/login");
  await submitLogin(page, email, password);
  await expect(page).not.toHaveURL(/\/login(\?|$)/);
}

/** The header's account menu button. */
export const accountButton = (page: Page, name: string) => page.getByRole("button", { name: `Account: ${name}` });

/**
 * A console link's href as it is now: the path, with the tab's team (`?team=<slug>`, or `&team=`
 * after other parameters) that every console link keeps (components/layout/team-link.tsx).
 */
export function teamHref(path: string): RegExp {
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`^${escaped}(?:[?&]team=[a-z0-9-]+)?$`);
}
