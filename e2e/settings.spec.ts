import type { Browser, Page } from "@playwright/test";
import { generate } from "otplib";
import { seriousAxeViolations } from "./a11y";
import { expect, OWNER, test } from "./fixtures";
import { screenshot, submitLogin, watchForErrors } from "./helpers";

// @db: Settings → Account and Team against a real `next start` and the real engine. Its own console
// instance: it changes the owner's password and turns two-factor sign-in on, which no other spec
// expects. Serial: each test goes on from the account the one before left.
test.use({ consoleInstance: "settings" });
test.describe.configure({ mode: "serial" });

const NEW_PASSWORD = "a different horse, battery and staple";

async function lookBothWays(page: Page, name: string) {
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    if (scheme === "dark") await expect(page.locator("html")).toHaveClass(/(^|\s)dark(\s|$)/);
    await screenshot(page, `${name}-${scheme}`);
    expect(await seriousAxeViolations(page), `axe on ${name} (${scheme})`).toEqual([]);
  }
  await page.emulateMedia({ colorScheme: "light" });
}

/** A fresh browser context (no cookies) on the console's /login. */
async function freshLogin(browser: Browser, baseURL: string): Promise<Page> {
  const context = await browser.newContext({ baseURL });
  const page = await context.newPage();
  await page.goto("/login");
  return page;
}

test("Account and Team settings are axe clean, light and dark, at 1280 and 390 px @db", async ({ signedIn: page }) => {
  const problems = watchForErrors(page);
  for (const [width, height] of [
    [1280, 900],
    [390, 844],
  ] as const) {
    await page.setViewportSize({ width, height });
    await page.goto("/settings");
    await expect(page.getByRole("heading", { level: 1, name: "Settings" })).toBeVisible();
    await expect(
      page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Account" }),
    ).toHaveAttribute("aria-current", "page");
    await expect(page.getByTestId("session-row").first()).toBeVisible();
    await lookBothWays(page, `settings-account-${width}`);

    await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Team" }).click();
    await expect(page).toHaveURL(/\/settings\/team(?:\?team=[a-z0-9-]+)?$/);
    await expect(page.getByLabel("Slug")).toHaveValue(/.+/);
    await lookBothWays(page, `settings-team-${width}`);
    // The delete dialog, with its typed confirmation, is clean too.
    await page.getByRole("button", { name: "Delete this team" }).click();
    const dialog = page.getByRole("dialog");
    await expect(dialog.getByRole("button", { name: "Delete team" })).toBeDisabled();
    await lookBothWays(page, `settings-team-delete-${width}`);
    await dialog.getByRole("button", { name: "Cancel" }).click();
  }
  expect(problems).toEqual([]);
});

test("changing the name shows it after a reload @db", async ({ signedIn: page }) => {
  const problems = watchForErrors(page);
  await page.goto("/settings");
  const name = page.getByLabel("Name", { exact: true });
  await name.fill("Ada King");
  await page.getByRole("button", { name: "Save name" }).click();
  await expect(page.getByRole("button", { name: "Save name" })).toBeDisabled();
  await page.reload();
  await expect(page.getByLabel("Name", { exact: true })).toHaveValue("Ada King");
  await name.fill(OWNER.name);
  await page.getByRole("button", { name: "Save name" }).click();
  await expect(page.getByRole("button", { name: "Save name" })).toBeDisabled();
  expect(problems).toEqual([]);
});

test("changing the password signs out another browser; this one stays @db", async ({
  signedIn: page,
  browser,
  baseURL,
}) => {
  const problems = watchForErrors(page, {
    allowStatus: (s, url) => s === 422 && url.endsWith("/api/me/password"),
  });
  const other = await freshLogin(browser, baseURL!);
  await submitLogin(other, OWNER.email, OWNER.password);
  await expect(other).not.toHaveURL(/\/login/);

  await page.goto("/settings");
  const form = page.locator("form", { has: page.getByLabel("Current password") });
  await form.getByLabel("Current password").fill("not my password at all");
  await form.getByLabel("New password", { exact: true }).fill(NEW_PASSWORD);
  await form.getByLabel("New password again").fill(NEW_PASSWORD);
  await form.getByRole("button", { name: "Change password" }).click();
  await expect(form.getByRole("alert")).toContainText("not right");

  await form.getByLabel("Current password").fill(OWNER.password);
  await form.getByRole("button", { name: "Change password" }).click();
  // This browser stays; the other one (and the first-run setup's own sign-in) are signed out.
  await expect(form.getByRole("status")).toContainText(/Password changed\. [2-9] other sessions were signed out\./);

  await other.goto("/settings");
  await expect(other).toHaveURL(/\/login/);
  await page.reload();
  await expect(page.getByRole("heading", { level: 1, name: "Settings" })).toBeVisible();
  await expect(page.getByTestId("session-row")).toHaveCount(1);
  await other.context().close();
  expect(problems).toEqual([]);
});

test("two-factor: set up from the QR page's key, then sign in with password and code @db", async ({
  signedIn: page,
  browser,
  baseURL,
}) => {
  const problems = watchForErrors(page);
  await page.goto("/settings");
  await page.getByRole("button", { name: "Set up two-factor authentication" }).click();
  await expect(page.getByRole("img", { name: /QR code/ })).toBeVisible();
  const secret = (await page.getByTestId("totp-secret").innerText()).replace(/\s+/g, "");
  expect(secret).toMatch(/^[A-Z2-7]{32}$/);
  await page.emulateMedia({ colorScheme: "light" });
  await screenshot(page, "settings-totp-enrol-light");
  expect(await seriousAxeViolations(page), "axe on the enrolment").toEqual([]);

  const now = Math.floor(Date.now() / 1000);
  await page.getByLabel("Code from the app").fill(await generate({ secret, epoch: now }));
  await page.getByRole("button", { name: "Turn on" }).click();
  const codes = page.getByTestId("recovery-codes");
  await expect(codes.getByRole("listitem")).toHaveCount(10);
  await screenshot(page, "settings-totp-recovery-codes-light");
  const recovery = await codes.getByRole("listitem").first().innerText();
  await page.getByRole("button", { name: "I have saved them" }).click();
  await expect(page.getByTestId("totp-state")).toHaveText("On");
  await expect(page.getByTestId("recovery-left")).toHaveText("10 recovery codes left.");

  // Signed out: the password alone no longer signs in; the next step's code does.
  const signIn = await freshLogin(browser, baseURL!);
  const loginProblems = watchForErrors(signIn, {
    allowStatus: (s, url) => s === 401 && url.endsWith("/api/auth/login/second-factor"),
  });
  await submitLogin(signIn, OWNER.email, NEW_PASSWORD);
  const code = signIn.getByLabel("Code");
  await expect(code).toBeVisible();
  await expect(signIn).toHaveURL(/\/login/);
  await screenshot(signIn, "login-code-step-light");
  expect(await seriousAxeViolations(signIn), "axe on the code step").toEqual([]);
  await code.fill("000000" === (await generate({ secret, epoch: now + 30 })) ? "111111" : "000000");
  await signIn.getByRole("button", { name: "Verify" }).click();
  await expect(signIn.locator("form").getByRole("alert")).toContainText("not right");
  await code.fill(await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }));
  await signIn.getByRole("button", { name: "Verify" }).click();
  await expect(signIn).toHaveURL(/\/sandboxes/);

  // And once more with a recovery code, from another browser.
  const again = await freshLogin(browser, baseURL!);
  await submitLogin(again, OWNER.email, NEW_PASSWORD);
  await again.getByLabel("Code").fill(recovery);
  await again.getByRole("button", { name: "Verify" }).click();
  await expect(again).toHaveURL(/\/sandboxes/);

  await page.reload();
  await expect(page.getByTestId("recovery-left")).toHaveText("9 recovery codes left.");
  await expect(page.getByTestId("session-row")).toHaveCount(3);
  await signIn.context().close();
  await again.context().close();
  expect(problems).toEqual([]);
  expect(loginProblems).toEqual([]);
});
