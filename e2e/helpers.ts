import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "@playwright/test";
import { OWNER, ROOT, SCREENS_DIR, expect, type Servers } from "./fixtures";

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

/** Someone who signs in with an email and a password. */
export interface Person {
  email: string;
  password: string;
}

/**
 * Runs a script of e2e/seed in the console's environment (its database and data dir), under the
 * react-server condition where `server-only` is the empty module it is inside Next. Each script
 * prints one JSON line when it is done: that line, parsed.
 */
export function runSeed<T = unknown>(servers: Servers, script: string, args: string[]): T {
  const out = execFileSync(
    process.execPath,
    ["--conditions=react-server", "--import", "tsx", path.join(ROOT, "e2e/seed", script), ...args],
    { cwd: ROOT, env: servers.env, stdio: ["ignore", "pipe", "inherit"] },
  );
  return JSON.parse(out.toString().trim().split("\n").at(-1)!) as T;
}

/** e2e/seed/add-member.ts: `who` joins the owner's team with `role`, connected to the local engine in its account. */
export function addMember(servers: Servers, who: Person, role: string): { userId: string; teamId: string } {
  return runSeed(servers, "add-member.ts", [who.email, who.password, OWNER.email, role]);
}

/** e2e/seed/add-team-user.ts: a user who owns a team of their own named `team` (without it, in no team). */
export function addTeamUser(servers: Servers, who: Person, team?: string): { userId: string; teamId: string | null } {
  return runSeed(servers, "add-team-user.ts", [who.email, who.password, ...(team ? [team] : [])]);
}

/** A new browser context signed in as `user` through the sign-in API (POST /api/auth/login). */
export async function signedInContext(browser: Browser, baseURL: string, user: Person): Promise<BrowserContext> {
  const context = await browser.newContext({ baseURL });
  const login = await context.request.post("/api/auth/login", {
    data: { email: user.email, password: user.password },
    headers: { origin: baseURL },
  });
  expect(login.status()).toBe(200);
  return context;
}
