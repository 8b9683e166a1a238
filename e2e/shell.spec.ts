import type { APIRequestContext, Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { screenshot, teamHref, watchForErrors } from "./helpers";

// The sections of the console, in sidebar order (the owner sees the audit log too), and what each
// says to a user with no connection yet: the resource pages say how to connect, the team's pages
// show the team.
const SECTIONS = [
  ["Sandboxes", "/sandboxes", "No orkestr connection yet"],
  ["Volumes", "/volumes", "No orkestr connection yet"],
  ["Snapshots", "/snapshots", "No orkestr connection yet"],
  ["Templates", "/templates", "No orkestr connection yet"],
  ["Webhooks", "/webhooks", "No orkestr connection yet"],
  ["Events", "/events", "No orkestr connection yet"],
  ["Limits", "/limits", "No orkestr connection yet"],
  ["Usage", "/usage", "No orkestr connection yet"],
  ["Team", "/team", "Who is in"],
  ["Audit log", "/audit", "Who did what in this team"],
  ["Settings", "/settings", "Your account: how you appear to your team"],
] as const;

// Baton is set up (first run done through the API) before any test: the console needs a session
// (the `signedIn` page), and /login leads to /setup until an owner exists. The first-run pages
// themselves are tested on a console of their own, in auth.spec.ts.
test.beforeAll(async ({ owner }) => {
  expect(owner.email).toBeTruthy();
});

/** The page background as sRGB 0–255, whatever colour syntax the computed style uses (oklch here). */
async function bodyBackground(page: Page): Promise<[number, number, number]> {
  return page.evaluate(() => {
    const canvas = document.createElement("canvas");
    canvas.width = canvas.height = 1;
    const ctx = canvas.getContext("2d")!;
    ctx.fillStyle = getComputedStyle(document.body).backgroundColor;
    ctx.fillRect(0, 0, 1, 1);
    const [r, g, b] = ctx.getImageData(0, 0, 1, 1).data;
    return [r!, g!, b!] as [number, number, number];
  });
}
const luminance = ([r, g, b]: [number, number, number]) => (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;

test.describe("sign-in pages", () => {
  test("the login page renders a labelled, keyboard-ready form", async ({ page }) => {
    const problems = watchForErrors(page);
    await page.emulateMedia({ colorScheme: "light" });
    const response = await page.goto("/login");
    expect(response?.status()).toBe(200);
    await expect(page).toHaveTitle("Sign in · Baton");
    await expect(page.getByRole("heading", { level: 1, name: "Sign in" })).toBeVisible();
    await expect(page.getByLabel("Email", { exact: true })).toBeFocused();
    await screenshot(page, "login-light");
    await expect(page.getByLabel("Email", { exact: true })).toHaveAttribute("autocomplete", "username");
    await expect(page.getByLabel("Password")).toHaveAttribute("type", "password");
    await page.keyboard.press("Tab");
    await expect(page.getByLabel("Password")).toBeFocused();
    await page.keyboard.press("Tab");
    await expect(page.getByRole("button", { name: "Sign in" })).toBeFocused();
    await page.getByLabel("Email", { exact: true }).focus();
    await page.emulateMedia({ colorScheme: "dark" });
    await expect(page.locator("html")).toHaveClass(/(^|\s)dark(\s|$)/);
    await screenshot(page, "login-dark");
    expect(problems).toEqual([]);
  });

  test("a submit before hydration never puts the password in the URL", async ({ page }) => {
    await page.route("**/_next/static/chunks/*.js", (route) => route.abort());
    await page.goto("/login");
    await page.getByLabel("Email", { exact: true }).fill("owner@example.com");
    await page.getByLabel("Password").fill("hunter2-secret");
    const submitted = page.waitForRequest(
      (request) => new URL(request.url()).pathname === "/login" && request.method() === "POST",
    );
    await page.getByLabel("Password").press("Enter");
    await submitted;
    await page.waitForLoadState();
    expect(page.url()).not.toContain("hunter2");
  });
});

test("an unknown route answers 404 with a way back", async ({ signedIn: page }) => {
  const response = await page.goto("/no/such/page");
  expect(response?.status()).toBe(404);
  await expect(page.getByRole("heading", { level: 1, name: "Page not found" })).toBeVisible();
  await screenshot(page, "not-found-light");
  await page.getByRole("link", { name: "Back to the console" }).click();
  await expect(page).toHaveURL(/\/sandboxes(?:[?&]team=[a-z0-9-]+)?$/);
});

test("/favicon.ico is an icon, not a 404 (browsers ask for it on their own, outside any page's requests)", async ({
  signedIn: page,
}) => {
  const res = await page.request.get("/favicon.ico");
  expect(res.status()).toBe(200);
  expect(res.headers()["content-type"]).toMatch(/^image\//);
  expect((await res.body()).subarray(0, 4)).toEqual(Buffer.from([0, 0, 1, 0])); // ICO header
});

test.describe("console shell", () => {
  test("/sandboxes renders the shell: sidebar with all ten sections, header, honest empty state", async ({
    signedIn: page,
  }) => {
    const problems = watchForErrors(page);
    await page.emulateMedia({ colorScheme: "light" });
    const response = await page.goto("/sandboxes");
    expect(response?.status()).toBe(200);
    const nav = page.getByRole("navigation", { name: "Console" });
    await expect(nav.getByRole("link")).toHaveText(SECTIONS.map(([title]) => title));
    await expect(nav.getByRole("link", { name: "Sandboxes" })).toHaveAttribute("aria-current", "page");
    await expect(page.getByRole("heading", { level: 1, name: "Sandboxes" })).toBeVisible();
    await expect(page.getByText("No orkestr connection yet")).toBeVisible();
    await expect(page.getByRole("main").getByRole("link", { name: "Set up a connection" })).toHaveAttribute(
      "href",
      teamHref("/settings/connections"),
    );
    const status = page.getByRole("status").filter({ hasText: "Not connected" });
    await expect(status).toBeVisible();
    await expect(status).toHaveAttribute("data-state", "none");
    await expect(page.getByRole("group", { name: "Theme" })).toBeVisible();
    await expect(page.getByRole("button", { name: "Account: Ada Lovelace" })).toBeVisible();
    await screenshot(page, "sandboxes-light");
    expect(problems).toEqual([]);
  });

  test("every section is reachable from the sidebar and says what it needs or which issue builds it", async ({
    signedIn: page,
  }) => {
    const problems = watchForErrors(page);
    await page.goto("/sandboxes");
    const nav = page.getByRole("navigation", { name: "Console" });
    for (const [title, href, emptyState] of SECTIONS) {
      await nav.getByRole("link", { name: title }).click();
      await expect(page).toHaveURL(new RegExp(`${href}(?:[?&]team=[a-z0-9-]+)?$`));
      await expect(page.getByRole("heading", { level: 1, name: title })).toBeVisible();
      await expect(page.getByText(emptyState)).toBeVisible();
      await expect(nav.getByRole("link", { name: title })).toHaveAttribute("aria-current", "page");
      await expect(nav.locator("[aria-current=page]")).toHaveCount(1);
    }
    await page.getByRole("main").getByRole("link", { name: "Connections" }).click();
    await expect(page).toHaveURL(/\/settings\/connections(?:[?&]team=[a-z0-9-]+)?$/);
    await expect(page.getByRole("heading", { level: 1, name: "Connections" })).toBeVisible();
    // Built with issue 4 (e2e/connections.spec.ts covers it).
    await expect(page.getByRole("form", { name: "Add a connection" })).toBeVisible();
    await expect(nav.getByRole("link", { name: "Settings" })).toHaveAttribute("aria-current", "page");
    expect(problems).toEqual([]);
  });

  test("the skip link is the first stop and moves focus to the content", async ({ signedIn: page }) => {
    await page.goto("/sandboxes");
    await page.keyboard.press("Tab");
    const skip = page.getByRole("link", { name: "Skip to content" });
    await expect(skip).toBeFocused();
    await expect(skip).toBeInViewport();
    await page.keyboard.press("Enter");
    await expect(page.locator("main#main")).toBeFocused();
  });

  test("below the md breakpoint the sidebar collapses into a modal drawer", async ({ signedIn: page }) => {
    const problems = watchForErrors(page);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto("/sandboxes");
    await expect(page.getByRole("navigation", { name: "Console" })).toBeHidden();
    const menu = page.getByRole("button", { name: "Open navigation" });
    await menu.click();
    const drawer = page.getByRole("dialog", { name: "Navigation" });
    await expect(drawer).toBeVisible();
    await expect(drawer.getByRole("link")).toHaveText(["Baton", ...SECTIONS.map(([title]) => title)]);
    await screenshot(page, "sandboxes-mobile-drawer");
    await page.keyboard.press("Escape");
    await expect(drawer).toBeHidden();
    await expect(menu).toBeFocused();
    await menu.click();
    await drawer.getByRole("link", { name: "Volumes" }).click();
    await expect(page).toHaveURL(/\/volumes(?:[?&]team=[a-z0-9-]+)?$/);
    await expect(drawer).toBeHidden();
    await expect(page.getByRole("heading", { level: 1, name: "Volumes" })).toBeVisible();
    expect(problems).toEqual([]);
  });
});

/**
 * A console path as the console names it, with the acting team (`/sandboxes?team=<slug>`): a bare
 * console URL answers with a redirect to that, and these checks are about the page itself.
 */
async function withActingTeam(request: APIRequestContext, path: string): Promise<string> {
  const url = new URL((await request.get(path)).url());
  expect(url.searchParams.get("team"), url.href).toBeTruthy();
  return `${url.pathname}${url.search}`;
}

test.describe("security headers", () => {
  for (const route of ["/login", "/sandboxes", "/no/such/page"]) {
    test(`${route}: the CSP carries a fresh nonce and every script in the HTML carries it`, async ({
      request: anonymous,
      signedIn,
    }) => {
      // Console pages need a session (without one they redirect to /login); the others are public.
      const request = route === "/sandboxes" ? signedIn.request : anonymous;
      const url = route === "/sandboxes" ? await withActingTeam(request, route) : route;
      const response = await request.get(url, { maxRedirects: 0 });
      expect(response.status()).toBe(route === "/no/such/page" ? 404 : 200);
      const csp = response.headers()["content-security-policy"] ?? "";
      const nonce = /'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1];
      expect(nonce, csp).toBeTruthy();
      expect(csp).toContain("'strict-dynamic'");
      expect(csp).not.toContain("unsafe-eval");
      expect(csp).toContain("frame-src http://*.sbx.localhost:* https://*.sbx.orkestr.run");
      for (const directive of [
        "default-src 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "object-src 'none'",
        "form-action 'self'",
        "connect-src 'self'",
      ]) {
        expect(csp).toContain(directive);
      }
      const html = await response.text();
      const scripts = html.match(/<script\b[^>]*>/gi) ?? [];
      const inline = scripts.filter((tag) => !/\ssrc=/i.test(tag));
      expect(inline.length).toBeGreaterThan(0); // the theme script and Next's flight data at least
      for (const tag of scripts) expect(tag).toContain(`nonce="${nonce}"`);
      expect(html).not.toContain("x-nonce");

      const again = await request.get(url);
      const secondNonce = /'nonce-([^']+)'/.exec(again.headers()["content-security-policy"] ?? "")?.[1];
      expect(secondNonce).not.toBe(nonce);
    });
  }

  test("the browser runs the page under the CSP without a single violation", async ({ signedIn: page }) => {
    const problems = watchForErrors(page);
    await page.goto("/sandboxes");
    // Hydrated (client JS ran under the policy): the theme toggle reacts.
    await page.getByRole("button", { name: "Dark theme" }).click();
    await expect(page.locator("html")).toHaveClass(/(^|\s)dark(\s|$)/);
    expect(problems).toEqual([]);
  });

  test("security headers are set, HSTS only over HTTPS (which a client's own X-Forwarded-Proto does not prove)", async ({
    signedIn,
  }) => {
    const request = signedIn.request;
    const sandboxes = await withActingTeam(request, "/sandboxes");
    const plain = await request.get(sandboxes, { maxRedirects: 0 });
    expect(plain.status()).toBe(200);
    const h = plain.headers();
    expect(h["x-content-type-options"]).toBe("nosniff");
    expect(h["referrer-policy"]).toBe("strict-origin-when-cross-origin");
    expect(h["x-frame-options"]).toBe("DENY");
    expect(h["permissions-policy"]).toContain("camera=()");
    expect(h["permissions-policy"]).toContain("microphone=()");
    expect(h["x-powered-by"]).toBeUndefined();
    expect(h["strict-transport-security"]).toBeUndefined();

    // No reverse proxy is trusted here (BATON_TRUSTED_PROXIES=0): the console server drops a client's
    // X-Forwarded-Proto, so claiming HTTPS earns no HSTS. (Behind a trusted proxy its X-Forwarded-Proto
    // is kept: tests/console/console-server.test.ts; and HSTS follows it: lib/security-headers.test.ts.)
    const claimed = await request.get(sandboxes, { headers: { "x-forwarded-proto": "https" }, maxRedirects: 0 });
    expect(claimed.status()).toBe(200);
    expect(claimed.headers()["strict-transport-security"]).toBeUndefined();
  });
});

test.describe("dark mode", () => {
  test("follows the system before any script of the app runs", async ({ signedIn: page }) => {
    await page.emulateMedia({ colorScheme: "dark" });
    // Only the inline pre-paint script may run: every Next/React chunk is blocked.
    await page.route("**/_next/static/chunks/*.js", (route) => route.abort());
    await page.goto("/sandboxes");
    await expect(page.locator("html")).toHaveClass(/(^|\s)dark(\s|$)/);
    expect(luminance(await bodyBackground(page))).toBeLessThan(0.2);
  });

  test("follows the system, live", async ({ signedIn: page }) => {
    const problems = watchForErrors(page);
    await page.emulateMedia({ colorScheme: "dark" });
    await page.goto("/sandboxes");
    await expect(page.locator("html")).toHaveClass(/(^|\s)dark(\s|$)/);
    expect(luminance(await bodyBackground(page))).toBeLessThan(0.2);
    await expect(page.getByRole("button", { name: "System theme" })).toHaveAttribute("aria-pressed", "true");
    await screenshot(page, "sandboxes-dark");

    await page.emulateMedia({ colorScheme: "light" });
    await expect(page.locator("html")).not.toHaveClass(/(^|\s)dark(\s|$)/);
    expect(luminance(await bodyBackground(page))).toBeGreaterThan(0.8);
    expect(problems).toEqual([]);
  });

  test("the toggle overrides the system and persists across reloads", async ({ signedIn: page }) => {
    const problems = watchForErrors(page);
    const html = page.locator("html");
    await page.emulateMedia({ colorScheme: "light" });
    await page.goto("/sandboxes");
    await expect(html).not.toHaveClass(/(^|\s)dark(\s|$)/);

    await page.getByRole("button", { name: "Dark theme" }).click();
    await expect(html).toHaveClass(/(^|\s)dark(\s|$)/);
    await expect(page.getByRole("button", { name: "Dark theme" })).toHaveAttribute("aria-pressed", "true");
    expect(await page.evaluate(() => localStorage.getItem("baton-theme"))).toBe("dark");

    await page.reload();
    await expect(html).toHaveClass(/(^|\s)dark(\s|$)/);
    expect(luminance(await bodyBackground(page))).toBeLessThan(0.2);
    await expect(page.getByRole("button", { name: "Dark theme" })).toHaveAttribute("aria-pressed", "true");

    // The choice holds against a system change, and on other pages (the login page too, which a
    // signed-in visitor does not see: drop the session cookie first).
    await page.emulateMedia({ colorScheme: "light" });
    await expect(html).toHaveClass(/(^|\s)dark(\s|$)/);
    await page.context().clearCookies();
    await page.goto("/login");
    await expect(page.getByRole("heading", { level: 1, name: "Sign in" })).toBeVisible();
    await expect(html).toHaveClass(/(^|\s)dark(\s|$)/);

    await page.getByRole("button", { name: "Light theme" }).click();
    await page.emulateMedia({ colorScheme: "dark" });
    await page.reload();
    await expect(html).not.toHaveClass(/(^|\s)dark(\s|$)/);
    expect(luminance(await bodyBackground(page))).toBeGreaterThan(0.8);

    await page.getByRole("button", { name: "System theme" }).click();
    await expect(html).toHaveClass(/(^|\s)dark(\s|$)/);
    expect(await page.evaluate(() => localStorage.getItem("baton-theme"))).toBeNull();
    expect(problems).toEqual([]);
  });
});
