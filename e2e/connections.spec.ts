import type { Page } from "@playwright/test";
import { clearFaults, injectFault } from "../engine/test/helpers/engine";
import { expect, test } from "./fixtures";
import { screenshot, watchForErrors } from "./helpers";

// @db: connections are rows of the console database (encrypted tokens, one active per user).
// Settings → Connections and the header's status indicator, against the real engine and a real
// `next start` (no mocked network). Its own console instance: it connects things the shell spec
// expects to be unconnected.
test.use({ consoleInstance: "connections" });
test.describe.configure({ mode: "serial" });

const headerStatus = (page: Page) => page.locator("header").getByRole("status");
const addForm = (page: Page) => page.getByRole("form", { name: "Add a connection" });
const item = (page: Page, name: string) => page.getByRole("listitem", { name: `Connection ${name}` });

async function addConnection(page: Page, name: string, baseUrl: string, token: string) {
  const form = addForm(page);
  await form.getByLabel("Name").fill(name);
  await form.getByLabel("Base URL").fill(baseUrl);
  await form.getByLabel("API token").fill(token);
  await form.getByRole("button", { name: "Add connection" }).click();
}

test("empty state: no connection, the header links to Settings → Connections @db", async ({ signedIn: page }) => {
  const problems = watchForErrors(page);
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto("/sandboxes");
  await expect(headerStatus(page)).toHaveAttribute("data-state", "none");
  await page.getByRole("link", { name: /Not connected/ }).click();
  await expect(page).toHaveURL(/\/settings\/connections(?:[?&]team=[a-z0-9-]+)?$/);
  await expect(page.getByRole("heading", { level: 1, name: "Connections" })).toBeVisible();
  await expect(page.getByTestId("connections-empty")).toBeVisible();
  await expect(page.getByRole("button", { name: "Use the local engine" })).toBeVisible();
  await screenshot(page, "connections-empty-light");
  expect(problems).toEqual([]);
});

test("a bad token: a clear error on the token field, nothing saved @db", async ({ signedIn: page, servers }) => {
  watchForErrors(page, { allowStatus: (s, url) => s === 422 && url.endsWith("/api/connections") });
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto("/settings/connections");
  await addConnection(page, "Typo", servers.engine.origin, "ork_thisisnotavalidtoken0000");
  const tokenError = page.getByTestId("error-token");
  await expect(tokenError).toBeVisible();
  await expect(tokenError).toContainText(/token/i);
  await expect(addForm(page).getByLabel("API token")).toHaveAttribute("aria-invalid", "true");
  await expect(addForm(page).getByLabel("API token")).toHaveValue(""); // the secret is not kept in the page
  await expect(page.getByTestId("connections-empty")).toBeVisible();
  await screenshot(page, "connections-error-bad-token-light");
  await page.reload();
  await expect(page.getByTestId("connections-empty")).toBeVisible();
});

test("a private address: the SSRF refusal on the base URL field @db", async ({ signedIn: page }) => {
  watchForErrors(page, { allowStatus: (s, url) => s === 422 && url.endsWith("/api/connections") });
  await page.goto("/settings/connections");
  await addConnection(page, "Inside", "http://10.1.2.3", "ork_abcdefghijklmnopqrst");
  const urlError = page.getByTestId("error-base_url");
  await expect(urlError).toBeVisible();
  await expect(urlError).toContainText(/private|10\.1\.2\.3|https/i);
  await expect(page.getByTestId("error-token")).toHaveCount(0);
  await expect(page.getByTestId("connections-empty")).toBeVisible();
  await screenshot(page, "connections-error-ssrf-light");
});

test("connects the local engine in one click: listed as active, the header names it and turns ok @db", async ({
  signedIn: page,
  servers,
}) => {
  const problems = watchForErrors(page);
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto("/settings/connections");
  await page.getByRole("button", { name: "Use the local engine" }).click();
  const local = item(page, "Local engine");
  await expect(local).toBeVisible();
  await expect(local.getByText("Active", { exact: true })).toBeVisible();
  await expect(local.getByTestId("base-url")).toHaveText(servers.engine.origin);
  await expect(local.locator("code")).toHaveText(/^ork_…[A-Za-z0-9_-]{4}$/);
  await expect(local.getByTestId("last-check")).toContainText("OK");
  await expect(headerStatus(page)).toHaveAttribute("data-state", "ok");
  await expect(headerStatus(page)).toContainText(`Local engine · ${new URL(servers.engine.origin).host}`);
  await screenshot(page, "connections-local-engine-light");
  // Server-rendered on a fresh load too.
  await page.goto("/sandboxes");
  await expect(headerStatus(page)).toHaveAttribute("data-state", "ok");
  await expect(headerStatus(page)).toHaveAttribute("title", new RegExp(servers.engine.origin.replace(/[.]/g, "\\.")));
  await page.locator("header").screenshot({ path: "test-results/screens/header-ok-light.png" });
  await page.emulateMedia({ colorScheme: "dark" });
  await page.goto("/settings/connections");
  await expect(page.locator("html")).toHaveClass(/(^|\s)dark(\s|$)/);
  await screenshot(page, "connections-local-engine-dark");
  await page.locator("header").screenshot({ path: "test-results/screens/header-ok-dark.png" });
  expect(problems).toEqual([]);
});

test("the header shows an error with its detail when the API stops answering @db", async ({
  signedIn: page,
  servers,
}) => {
  await injectFault(servers.engine, { kind: "error", status: 500, path: "^/v1/(sandboxes/)?limits$" });
  try {
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto("/sandboxes");
      await expect(headerStatus(page)).toHaveAttribute("data-state", "error");
      await expect(headerStatus(page)).toContainText("Not answering");
      await expect(headerStatus(page)).toHaveAttribute("title", /500|error/i);
      await page.locator("header").screenshot({ path: `test-results/screens/header-error-${scheme}.png` });
    }
    await page.goto("/settings/connections");
    await expect(item(page, "Local engine").getByTestId("last-check")).toContainText(/500|error/i);
    await screenshot(page, "connections-check-error-dark");
  } finally {
    await clearFaults(servers.engine);
  }
});

test("add, set active, replace the token and remove with confirmation @db", async ({ signedIn: page, servers }) => {
  const problems = watchForErrors(page);
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto("/settings/connections");
  const first = await servers.engine.mint(["sandboxes:read", "sandboxes:write"]);
  await addConnection(page, "Second", servers.engine.origin, first);
  const second = item(page, "Second");
  await expect(second).toBeVisible();
  await expect(second.locator("code")).toHaveText(`ork_…${first.slice(-4)}`);
  await expect(second.getByText("Active", { exact: true })).toHaveCount(0);

  await second.getByRole("button", { name: "Set active" }).click();
  await expect(second.getByText("Active", { exact: true })).toBeVisible();
  await expect(item(page, "Local engine").getByText("Active", { exact: true })).toHaveCount(0);
  await expect(headerStatus(page)).toContainText("Second");

  const next = await servers.engine.mint(["sandboxes:read", "sandboxes:write"]);
  await second.getByRole("button", { name: "Replace token" }).click();
  await second.getByLabel("New API token").fill(next);
  await second.getByRole("button", { name: "Save token" }).click();
  await expect(second.locator("code")).toHaveText(`ork_…${next.slice(-4)}`);

  // Keyboard: open the dialog, Escape cancels; then confirm.
  await second.getByRole("button", { name: "Remove" }).focus();
  await page.keyboard.press("Enter");
  const dialog = page.getByRole("dialog", { name: "Remove “Second”?" });
  await expect(dialog).toBeVisible();
  await screenshot(page, "connections-remove-dialog-light");
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
  await expect(second).toBeVisible();
  await second.getByRole("button", { name: "Remove" }).click();
  await dialog.getByRole("button", { name: "Remove connection" }).click();
  await expect(second).toHaveCount(0);
  await expect(item(page, "Local engine").getByText("Active", { exact: true })).toBeVisible();
  await expect(headerStatus(page)).toContainText("Local engine");
  expect(problems).toEqual([]);
});
