import http from "node:http";
import type { Page } from "@playwright/test";
import { OWNER, expect, test } from "./fixtures";
import { accountButton, screenshot, signInThroughForm, submitLogin, watchForErrors } from "./helpers";

// @db: first run, accounts, sessions (revocation, sign out everywhere) and the sign-in rate limit
// (login_attempts upserts) are rows in the console database; the Host check (421) is not, so untagged.
// Sign-in end to end, in Chromium, against the real console and engine: nothing is mocked. This
// file runs on a console instance of its own (a fresh database), because it starts with the first
// run, and its tests build on each other in order.
test.use({ consoleInstance: "auth" });
test.describe.configure({ mode: "serial" });

const isDark = /(^|\s)dark(\s|$)/;

async function openAccountMenu(page: Page) {
  await accountButton(page, OWNER.name).click();
  const menu = page.getByRole("menu");
  await expect(menu).toBeVisible();
  return menu;
}

test("while nobody has an account, the console and /login lead to /setup @db", async ({ page }) => {
  for (const path of ["/", "/sandboxes", "/settings/connections", "/login"]) {
    await page.goto(path);
    await expect(page, path).toHaveURL(/\/setup$/);
  }
  await expect(page.getByRole("heading", { level: 1, name: "Set up Baton" })).toBeVisible();
  // The API is closed without a session whatever the state.
  const me = await page.request.get("/api/me");
  expect(me.status()).toBe(401);
  expect(await me.json()).toMatchObject({ code: "unauthorized" });
});

test("the setup page checks the confirmation, then shows the server's validation @db", async ({ page, servers }) => {
  const problems = watchForErrors(page, { allowStatus: (status, url) => status === 422 && url.endsWith("/api/setup") });
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto("/setup");
  for (const label of ["Setup code", "Name", "Email", "Password", "Confirm password", "Team name"])
    await expect(page.getByLabel(label, { exact: true })).toBeVisible();
  await expect(page.getByLabel("Setup code")).toBeFocused();
  await page.getByLabel("Setup code").fill(servers.setupCode());
  await page.getByLabel("Name", { exact: true }).fill("Ada");
  await page.getByLabel("Email", { exact: true }).fill("ada@example.com");
  await page.getByLabel("Password", { exact: true }).fill("correct horse battery");
  await page.getByLabel("Confirm password").fill("correct horse battery!");
  await page.getByLabel("Team name").fill("Analytical Engines");
  await page.getByRole("button", { name: "Create owner account" }).click();
  await expect(page.getByText("The passwords do not match.")).toBeVisible();
  await expect(page.getByLabel("Confirm password")).toBeFocused();
  await expect(page.getByLabel("Confirm password")).toHaveAttribute("aria-invalid", "true");
  await expect(page.getByLabel("Password", { exact: true })).toHaveAccessibleDescription("At least 12 characters.");

  // The browser enforces the length first; the server says the same to a client that does not.
  const tooShort = await page.request.post("/api/setup", {
    data: {
      name: "Ada",
      email: "ada@example",
      password: "short",
      team_name: "Analytical Engines",
      setup_code: servers.setupCode(),
    },
    headers: { origin: new URL(page.url()).origin },
  });
  expect(tooShort.status()).toBe(422);
  expect(await tooShort.json()).toMatchObject({
    code: "validation_error",
    detail: "Email: is not a valid email address. Password: must be at least 12 characters.",
  });
  await screenshot(page, "setup-light");
  expect(problems).toEqual([]);
});

test("first-run setup needs the setup code the server printed at start @db", async ({ page, servers }) => {
  const problems = watchForErrors(page, { allowStatus: (status, url) => status === 403 && url.endsWith("/api/setup") });
  await page.goto("/setup");
  await page.getByLabel("Setup code").fill("AAAA-BBBB-CCCC");
  await page.getByLabel("Name", { exact: true }).fill(OWNER.name);
  await page.getByLabel("Email", { exact: true }).fill(OWNER.email);
  await page.getByLabel("Password", { exact: true }).fill(OWNER.password);
  await page.getByLabel("Confirm password").fill(OWNER.password);
  await page.getByLabel("Team name").fill(OWNER.teamName);
  await page.getByRole("button", { name: "Create owner account" }).click();
  await expect(page.getByRole("main").getByRole("alert")).toContainText("That is not the setup code.");
  await expect(page).toHaveURL(/\/setup$/);
  // The code is in the server's log, and nowhere in what the page was sent.
  expect(await page.content()).not.toContain(servers.setupCode());
  expect(problems).toEqual([]);
});

test("a page on another host name (DNS rebinding to 127.0.0.1) gets 421 from the console server", async ({
  servers,
}) => {
  const { port } = new URL(servers.baseURL);
  const foreign = `evil.example:${port}`;
  const ask = (method: string, pathname: string, headers: Record<string, string>, body?: string) =>
    new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
      const req = http.request(
        { host: "127.0.0.1", port: Number(port), method, path: pathname, headers, setHost: false },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => (text += c));
          res.on("end", () =>
            resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"]), body: text }),
          );
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  // What the rebinding page's fetch sends: its own name in Host and Origin, same-origin.
  const body = JSON.stringify({
    name: "Eve",
    email: "eve@example.com",
    password: "a long enough password",
    team_name: "Evil",
    setup_code: servers.setupCode(),
  });
  const setup = await ask(
    "POST",
    "/api/setup",
    { host: foreign, origin: `http://${foreign}`, "sec-fetch-site": "same-origin", "content-type": "application/json" },
    body,
  );
  expect(setup.status).toBe(421);
  expect(JSON.parse(setup.body)).toMatchObject({ code: "host_not_allowed" });
  const page = await ask("GET", "/setup", { host: foreign });
  expect(page.status).toBe(421);
  expect(page.type).toMatch(/^text\/plain/);
  // The console's own names are served, and the first run is still to be done.
  expect((await ask("GET", "/setup", { host: `localhost:${port}` })).status).toBe(200);
});

test("first-run setup creates the owner and lands in the console, signed in @db", async ({ page, servers }) => {
  const problems = watchForErrors(page);
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto("/setup");
  await page.getByLabel("Setup code").fill(servers.setupCode());
  await page.getByLabel("Name", { exact: true }).fill(OWNER.name);
  await page.getByLabel("Email", { exact: true }).fill(OWNER.email);
  await page.getByLabel("Password", { exact: true }).fill(OWNER.password);
  await page.getByLabel("Confirm password").fill(OWNER.password);
  await page.getByLabel("Team name").fill(OWNER.teamName);
  await screenshot(page, "setup-filled-light");
  await page.getByRole("button", { name: "Create owner account" }).click();

  // The next step of the first run: connecting an orkestr API, inside the console.
  await expect(page).toHaveURL(/\/settings\/connections(?:[?&]team=[a-z0-9-]+)?$/);
  await expect(page.getByRole("navigation", { name: "Console" })).toBeVisible();
  await expect(accountButton(page, OWNER.name)).toBeVisible();
  await screenshot(page, "signed-in-header-light");

  // The session is server-side: /api/me knows the owner and the team.
  const me = await page.request.get("/api/me");
  expect(me.status()).toBe(200);
  expect(await me.json()).toMatchObject({
    user: { name: OWNER.name, email: OWNER.email },
    memberships: [{ role: "owner", team: { name: OWNER.teamName } }],
  });
  // next-auth's own session endpoint agrees and does not reveal the session id.
  const nextAuthSession = await page.request.get("/api/auth/session");
  const body = await nextAuthSession.json();
  expect(body).toMatchObject({ user: { name: OWNER.name, email: OWNER.email } });
  expect(JSON.stringify(body)).not.toContain("sid");
  // The cookie is next-auth's, HttpOnly, and its JWT is opaque (encrypted).
  const cookies = await page.context().cookies();
  const session = cookies.find((c) => c.name === "next-auth.session-token");
  expect(session).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/" });
  expect(session!.value.split(".")).toHaveLength(5);
  expect(session!.value).not.toContain(Buffer.from(OWNER.email).toString("base64url").slice(0, 10));

  await page.emulateMedia({ colorScheme: "dark" });
  await expect(page.locator("html")).toHaveClass(isDark);
  await screenshot(page, "signed-in-header-dark");
  expect(problems).toEqual([]);
});

test("afterwards the setup page is gone @db", async ({ page }) => {
  await page.goto("/setup");
  await expect(page).toHaveURL(/\/login$/);
  await expect(page.getByRole("heading", { level: 1, name: "Sign in" })).toBeVisible();
  const again = await page.request.post("/api/setup", {
    data: { name: "Eve", email: "eve@example.com", password: "another long password", team_name: "Evil" },
    headers: { origin: new URL(page.url()).origin },
  });
  expect(again.status()).toBe(409);
  expect(await again.json()).toEqual({ detail: "Baton is already set up. Sign in instead.", code: "already_set_up" });
  // Signed in, /setup leads into the console.
  await signInThroughForm(page, OWNER.email, OWNER.password);
  await page.goto("/setup");
  await expect(page).toHaveURL(/\/sandboxes(?:[?&]team=[a-z0-9-]+)?$/);
});

test("a wrong password, or an unknown email, shows one clear error @db", async ({ page }) => {
  const problems = watchForErrors(page, {
    allowStatus: (status, url) => status === 401 && url.endsWith("/api/auth/login"),
  });
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto("/login");
  const failed = page.waitForResponse((r) => r.url().endsWith("/api/auth/login"));
  await submitLogin(page, OWNER.email, "not the right password");
  expect((await failed).status()).toBe(401);
  // (Scoped to <main>: Next's route announcer is an alert too.)
  const alert = page.getByRole("main").getByRole("alert");
  await expect(alert).toHaveText("Wrong email or password.");
  await expect(alert).toBeVisible();
  await expect(page).toHaveURL(/\/login$/);
  expect(page.url()).not.toContain("password");
  await screenshot(page, "login-error-light");

  await submitLogin(page, "nobody@example.com", OWNER.password);
  await expect(page.getByRole("button", { name: "Sign in" })).toBeEnabled();
  await expect(alert).toHaveText("Wrong email or password.");
  await page.emulateMedia({ colorScheme: "dark" });
  await expect(page.locator("html")).toHaveClass(isDark);
  await screenshot(page, "login-error-dark");
  expect(problems).toEqual([]);
});

test("sign in returns to the page asked for; sign out ends the session on the server @db", async ({ page }) => {
  const problems = watchForErrors(page);
  await page.goto("/volumes");
  await expect(page).toHaveURL(/\/login\?next=%2Fvolumes$/);
  await submitLogin(page, OWNER.email, OWNER.password);
  await expect(page).toHaveURL(/\/volumes(?:[?&]team=[a-z0-9-]+)?$/);
  await expect(page.getByRole("heading", { level: 1, name: "Volumes" })).toBeVisible();
  // Signed in, /login is not a page to stay on.
  await page.goto("/login");
  await expect(page).toHaveURL(/\/sandboxes(?:[?&]team=[a-z0-9-]+)?$/);
  const stolen = await page.context().cookies();

  // Keyboard: the menu opens with Enter, the first item has focus, Escape closes it and refocuses the button.
  await page.emulateMedia({ colorScheme: "light" });
  const button = accountButton(page, OWNER.name);
  await button.focus();
  await page.keyboard.press("Enter");
  const menu = page.getByRole("menu");
  await expect(menu).toBeVisible();
  await expect(button).toHaveAttribute("aria-expanded", "true");
  await expect(menu.getByRole("menuitem", { name: "Sign out", exact: true })).toBeFocused();
  await expect(page.getByText(OWNER.email, { exact: true })).toBeVisible();
  await screenshot(page, "user-menu-light");
  await page.keyboard.press("ArrowDown");
  await expect(menu.getByRole("menuitem", { name: "Sign out everywhere…" })).toBeFocused();
  await page.keyboard.press("ArrowDown");
  await expect(menu.getByRole("menuitem", { name: "Sign out", exact: true })).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(menu).toBeHidden();
  await expect(button).toBeFocused();
  await page.emulateMedia({ colorScheme: "dark" });
  await page.keyboard.press("ArrowDown");
  await expect(menu.getByRole("menuitem", { name: "Sign out", exact: true })).toBeFocused();
  await screenshot(page, "user-menu-dark");

  await page.keyboard.press("Enter"); // Sign out
  await expect(page).toHaveURL(/\/login$/);
  await page.goto("/sandboxes");
  await expect(page).toHaveURL(/\/login\?next=%2Fsandboxes$/);

  // The revocation is server-side: a copy of the old cookie gets nowhere either.
  await page.context().addCookies(stolen);
  await page.goto("/sandboxes");
  await expect(page).toHaveURL(/\/login\?next=%2Fsandboxes$/);
  expect((await page.request.get("/api/me")).status()).toBe(401);
  expect(problems.filter((p) => !p.includes("/api/me"))).toEqual([]);
});

test("sign out everywhere ends the sessions in every browser @db", async ({ browser, baseURL }) => {
  const a = await browser.newContext({ baseURL });
  const b = await browser.newContext({ baseURL });
  try {
    const pageA = await a.newPage();
    const pageB = await b.newPage();
    await signInThroughForm(pageA, OWNER.email, OWNER.password);
    await signInThroughForm(pageB, OWNER.email, OWNER.password);
    for (const p of [pageA, pageB]) {
      await p.goto("/templates");
      await expect(p.getByRole("heading", { level: 1, name: "Templates" })).toBeVisible();
    }

    const menu = await openAccountMenu(pageA);
    await menu.getByRole("menuitem", { name: "Sign out everywhere…" }).click();
    const dialog = pageA.getByRole("dialog", { name: "Sign out everywhere?" });
    await expect(dialog).toBeVisible();
    await expect(dialog).toContainText("every device and browser, this one included");
    await screenshot(pageA, "sign-out-everywhere-dialog");
    // Cancel keeps everything as it was and gives focus back to the account button.
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await expect(dialog).toBeHidden();
    await expect(accountButton(pageA, OWNER.name)).toBeFocused();
    expect((await pageB.request.get("/api/me")).status()).toBe(200);

    await (await openAccountMenu(pageA)).getByRole("menuitem", { name: "Sign out everywhere…" }).click();
    await pageA.getByRole("dialog").getByRole("button", { name: "Sign out everywhere" }).click();
    await expect(pageA).toHaveURL(/\/login$/);

    // B did nothing, and is signed out too.
    await pageB.reload();
    await expect(pageB).toHaveURL(/\/login\?next=%2Ftemplates(?:%3Fteam%3D[a-z0-9-]+)?$/);
    expect((await pageB.request.get("/api/me")).status()).toBe(401);
    await pageA.goto("/sandboxes");
    await expect(pageA).toHaveURL(/\/login\?next=%2Fsandboxes$/);
  } finally {
    await a.close();
    await b.close();
  }
});

test("next-auth's own sign-out endpoint revokes the session row too @db", async ({ page }) => {
  await signInThroughForm(page, OWNER.email, OWNER.password);
  const stolen = await page.context().cookies();
  const { csrfToken } = (await (await page.request.get("/api/auth/csrf")).json()) as { csrfToken: string };
  const signedOut = await page.request.post("/api/auth/signout", { form: { csrfToken, json: "true" } });
  expect(signedOut.ok()).toBe(true);
  expect((await page.request.get("/api/me")).status()).toBe(401);
  // Not just the cookie: a kept copy is dead as well.
  await page.context().addCookies(stolen.filter((c) => c.name === "next-auth.session-token"));
  expect((await page.request.get("/api/me")).status()).toBe(401);
  expect(await (await page.request.get("/api/auth/session")).json()).toEqual({});
});

test("repeated failures are rate limited with a clear message and Retry-After @db", async ({ page }) => {
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto("/login");
  const target = "mallory@example.com";
  for (let i = 1; i <= 10; i++) {
    const answered = page.waitForResponse((r) => r.url().endsWith("/api/auth/login"));
    await submitLogin(page, target, `guess number ${i}`);
    expect((await answered).status(), `attempt ${i}`).toBe(401);
  }
  const answered = page.waitForResponse((r) => r.url().endsWith("/api/auth/login"));
  await submitLogin(page, target, "guess number 11");
  const limited = await answered;
  expect(limited.status()).toBe(429);
  const retryAfter = Number(await limited.headerValue("retry-after"));
  expect(retryAfter).toBeGreaterThan(14 * 60);
  expect(retryAfter).toBeLessThanOrEqual(15 * 60);
  await expect(page.getByRole("main").getByRole("alert")).toHaveText(
    "Too many sign-in attempts. Try again in 15 minutes.",
  );
  await screenshot(page, "login-rate-limited");

  // The limit is per address: the owner can still sign in from here.
  await page.reload();
  await signInThroughForm(page, OWNER.email, OWNER.password);
  await expect(accountButton(page, OWNER.name)).toBeVisible();
});

// Last in this file: it spends this client's per-IP budget (every test here comes from 127.0.0.1).
test("failed sign-ins with a rotating X-Forwarded-For are still counted per client: the console server's socket address @db", async ({
  playwright,
  baseURL,
}) => {
  const api = await playwright.request.newContext({ baseURL });
  try {
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      // Every header a client could rotate to look like many clients.
      const response = await api.post("/api/auth/login", {
        data: { email: `nobody-${i}@example.com`, password: "wrong password" },
        headers: {
          origin: baseURL!,
          "x-forwarded-for": `198.51.100.${i}`,
          "x-real-ip": `203.0.113.${i}`,
          "x-baton-client-ip": `192.0.2.${i}`,
        },
      });
      statuses.push(response.status());
    }
    const firstLimited = statuses.indexOf(429);
    expect(firstLimited, statuses.join(" ")).toBeGreaterThan(-1);
    expect(firstLimited).toBeLessThanOrEqual(30);
    expect(
      statuses.slice(firstLimited).every((s) => s === 429),
      statuses.join(" "),
    ).toBe(true);
  } finally {
    await api.dispose();
  }
});
