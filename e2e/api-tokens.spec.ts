import type { Page } from "@playwright/test";
import { seriousAxeViolations } from "./a11y";
import { expect, test } from "./fixtures";
import { screenshot, watchForErrors } from "./helpers";

// Its own console: these tests connect the local engine, and shell.spec needs the shared one unconnected.
test.use({ consoleInstance: "api-tokens" });

// @db: Settings → API tokens against a real `next start` and the real engine (issue 23). The owner
// makes a token, sees it once, and a client with no cookie at all uses it as a Bearer token to make
// a sandbox through /api/v1; the list shows when and from where it was last used; revoked, it gets
// 401 on its next call.

async function lookBothWays(page: Page, name: string) {
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    if (scheme === "dark") await expect(page.locator("html")).toHaveClass(/(^|\s)dark(\s|$)/);
    await screenshot(page, `${name}-${scheme}`);
    expect(await seriousAxeViolations(page), `axe on ${name} (${scheme})`).toEqual([]);
  }
  await page.emulateMedia({ colorScheme: "light" });
}

test("a token made in Settings drives /api/v1 without a cookie, shows its last use, and stops when revoked @db", async ({
  connected: page,
  playwright,
  baseURL,
}) => {
  test.setTimeout(120_000);
  const problems = watchForErrors(page);
  await page.goto("/settings");
  await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "API tokens" }).click();
  await expect(page).toHaveURL(/\/settings\/tokens(?:\?team=[a-z0-9-]+)?$/);
  await expect(page.getByRole("heading", { level: 1, name: "API tokens" })).toBeVisible();
  await lookBothWays(page, "api-tokens-empty");

  // Make it: a name, read and write (the owner's default), 90 days (the default); "Never" is offered to an owner.
  await page.getByLabel("Name").fill("e2e agent");
  await expect(page.getByLabel("Expires after")).toHaveValue("90");
  await expect(page.getByLabel("Expires after").locator("option", { hasText: "Never" })).toHaveCount(1);
  await page.getByLabel("Scope").selectOption("write");
  await page.getByRole("button", { name: "Make token" }).click();
  const issued = page.getByTestId("api-token-issued");
  await expect(issued).toBeVisible();
  const token = (await page.getByTestId("api-token-value").textContent())!.trim();
  expect(token).toMatch(/^bat_[0-9A-Za-z]{38}$/);
  await expect(issued.getByRole("button", { name: "Copy token" })).toBeVisible();
  const row = page.getByTestId("api-token-row").filter({ hasText: "e2e agent" });
  await expect(row).toContainText("Read and write");
  await expect(row.getByTestId("api-token-last-used")).toHaveText("Never");
  await lookBothWays(page, "api-tokens-issued");

  // Shown once: gone after Done, and not in the page after a reload.
  await issued.getByRole("button", { name: "Done" }).click();
  await expect(issued).toBeHidden();
  await page.reload();
  await expect(row).toBeVisible();
  expect(await page.content()).not.toContain(token);
  await expect(row).toContainText(`bat_…${token.slice(-4)}`);

  // A client with no cookie: the Authorization header alone.
  const client = await playwright.request.newContext({ baseURL });
  const auth = { authorization: `Bearer ${token}` };
  const created = await client.post("/api/v1/sandboxes", { headers: auth, data: { template: "python-3.12" } });
  expect(created.status(), await created.text()).toBe(201);
  const sandbox = (await created.json()) as { id: string };
  const read = await client.get(`/api/v1/sandboxes/${sandbox.id}`, { headers: auth });
  expect(read.status()).toBe(200);
  expect(((await read.json()) as { id: string }).id).toBe(sandbox.id);

  // The list shows the use: a time and the client's address.
  await page.reload();
  await expect(row.getByTestId("api-token-last-used")).toContainText("from 127.0.0.1");
  await expect(row.getByTestId("api-token-last-used").locator("time")).toBeVisible();

  // Revoke, confirmed in a dialog.
  await row.getByRole("button", { name: "Revoke the token e2e agent" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog).toContainText("stops working at once");
  await lookBothWays(page, "api-tokens-revoke");
  await dialog.getByRole("button", { name: "Revoke token" }).click();
  await expect(dialog).toBeHidden();
  await expect(row).toContainText("revoked");
  await expect(row.getByRole("button", { name: /Revoke/ })).toHaveCount(0);

  const after = await client.get(`/api/v1/sandboxes/${sandbox.id}`, { headers: auth });
  expect(after.status()).toBe(401);
  expect(after.headers()["www-authenticate"]).toContain('error="invalid_token"');
  expect(await after.json()).toMatchObject({ code: "unauthorized", reason: "invalid_token" });
  await client.dispose();

  // Clean up the sandbox with the owner's session.
  const end = await page.request.delete(`/api/v1/sandboxes/${sandbox.id}`, { headers: { origin: baseURL! } });
  expect(end.status()).toBeLessThan(300);
  expect(problems).toEqual([]);
});

test("a token's own limits are set in the form, shown in the list, and its concurrency is enforced @db", async ({
  connected: page,
  playwright,
  baseURL,
}) => {
  test.setTimeout(120_000);
  const problems = watchForErrors(page);
  await page.goto("/settings/tokens");
  await expect(page.getByRole("heading", { level: 1, name: "API tokens" })).toBeVisible();
  await page.getByLabel("Name").fill("bounded agent");
  // Whole cents only, said before anything is sent.
  await page.getByLabel("Monthly spend cap (EUR)").fill("1.005");
  await page.getByRole("button", { name: "Make token" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "whole cents" })).toBeVisible();
  await page.getByLabel("Monthly spend cap (EUR)").fill("2.50");
  await page.getByLabel("Concurrent sandboxes at most").fill("1");
  await page.getByRole("button", { name: "Make token" }).click();
  await expect(page.getByTestId("api-token-issued")).toBeVisible();
  const token = (await page.getByTestId("api-token-value").textContent())!.trim();
  const row = page.getByTestId("api-token-row").filter({ hasText: "bounded agent" });
  await expect(row.getByTestId("api-token-limits")).toHaveText("€2.50 a month (UTC)1 sandbox at once");
  await lookBothWays(page, "api-tokens-limits");

  const client = await playwright.request.newContext({ baseURL });
  const auth = { authorization: `Bearer ${token}` };
  const first = await client.post("/api/v1/sandboxes", { headers: auth, data: { template: "python-3.12" } });
  expect(first.status(), await first.text()).toBe(201);
  const { id } = (await first.json()) as { id: string };
  const second = await client.post("/api/v1/sandboxes", { headers: auth, data: { template: "python-3.12" } });
  expect(second.status()).toBe(429);
  expect(await second.json()).toMatchObject({
    code: "concurrency_limit",
    detail: expect.stringContaining("at most 1 sandbox at once"),
  });
  const end = await client.delete(`/api/v1/sandboxes/${id}`, { headers: auth });
  expect(end.status()).toBeLessThan(300);
  await client.dispose();
  expect(problems).toEqual([]);
});
