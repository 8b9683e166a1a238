import fs from "node:fs";
import type { Page } from "@playwright/test";
import { seriousAxeViolations } from "./a11y";
import { expect, test } from "./fixtures";
import { screenshot, watchForErrors } from "./helpers";

// /audit against the real engine and the production console: a failed sign-in and a sandbox created
// and terminated are found by the filter controls and by the query box (kept in sync, and in the
// URL); the CSV export holds exactly the rows shown; free words are refused with a sentence; the
// page is axe clean in light and dark at 1280 and 390 px. A SIEM URL the operator allowed (nothing
// listens there: the stream stays off) gets its signing secret shown once.
const SIEM = "http://127.0.0.1:45997";
test.use({ consoleInstance: "audit", consoleEnv: { BATON_AUDIT_STREAM_ALLOW: SIEM } });
test.describe.configure({ mode: "serial" });

async function lookBothWays(page: Page, name: string) {
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    if (scheme === "dark") await expect(page.locator("html")).toHaveClass(/(^|\s)dark(\s|$)/);
    await screenshot(page, `${name}-${scheme}`);
    expect(await seriousAxeViolations(page), `${name} ${scheme}`).toEqual([]);
  }
  await page.emulateMedia({ colorScheme: "light" });
}

const shownIds = (page: Page) =>
  page
    .locator("[data-testid=audit-table] tbody tr")
    .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-audit-id")));

test("actions are found by filters and by query, and the CSV holds the same rows", async ({
  connected: page,
  servers,
  owner,
  playwright,
}) => {
  const problems = watchForErrors(page);
  // A failed sign-in (another client, no session).
  const stranger = await playwright.request.newContext({ baseURL: servers.baseURL });
  const failed = await stranger.post("/api/auth/login", {
    data: { email: owner.email, password: "not the password" },
    headers: { origin: servers.baseURL, "user-agent": "e2e-wrong-password" },
  });
  expect(failed.status()).toBe(401);
  await stranger.dispose();

  // A sandbox created and terminated through Baton's API, as the console's own pages do.
  const origin = { origin: servers.baseURL };
  const created = await page.request.post("/api/v1/sandboxes", { data: { template: "python-3.12" }, headers: origin });
  expect(created.status()).toBe(201);
  const sandboxId = ((await created.json()) as { id: string }).id;
  const terminated = await page.request.delete(`/api/v1/sandboxes/${sandboxId}`, { headers: origin });
  expect(terminated.ok()).toBe(true);

  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto("/audit");
  await expect(page.getByRole("heading", { level: 1, name: "Audit log" })).toBeVisible();
  await expect(
    page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Audit log" }),
  ).toBeVisible();
  await expect(page.locator("[data-testid=audit-table]")).toBeVisible();

  // By the filter controls: the query box follows.
  await page.getByLabel("Action", { exact: true }).fill("sandbox.terminate");
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(page.getByLabel("Query", { exact: true })).toHaveValue("action:sandbox.terminate");
  await expect(page).toHaveURL(/action=sandbox.terminate/);
  const terminateRow = page
    .locator(`[data-testid=audit-table] tbody tr[data-action="sandbox.terminate"]`)
    .filter({ hasText: sandboxId });
  await expect(terminateRow).toHaveCount(1);
  await expect(terminateRow).toContainText(owner.email);
  await expect(terminateRow).toContainText("ok");
  await terminateRow.getByText("Details").click();
  await expect(terminateRow).toContainText("session");

  // By the query box: the controls follow.
  await page.getByLabel("Query", { exact: true }).fill(`resource_type:sandbox resource_id:${sandboxId}`);
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page.getByLabel("Target id", { exact: true })).toHaveValue(sandboxId);
  await expect(page.getByLabel("Action", { exact: true })).toHaveValue("");
  await expect(page).toHaveURL(new RegExp(`target_id=${sandboxId}`));
  await expect(page.locator("[data-testid=audit-table] tbody tr")).toHaveCount(2);
  const actions = await page
    .locator("[data-testid=audit-table] tbody tr")
    .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-action")));
  expect(actions).toEqual(["sandbox.terminate", "sandbox.create"]);
  await lookBothWays(page, "audit-filtered");

  // The CSV export of this filter: exactly these rows.
  const ids = await shownIds(page);
  const download = page.waitForEvent("download");
  await page.getByTestId("audit-export-csv").click();
  const file = await (await download).path();
  const csv = fs.readFileSync(file, "utf8").trim().split(/\r?\n/);
  const header = csv[0]!.split(",");
  const idAt = header.indexOf("id");
  expect(csv.slice(1).map((line) => line.split(",")[idAt])).toEqual(ids);

  // The failed sign-in, by query; and the same by the controls.
  await page
    .getByLabel("Query", { exact: true })
    .fill(`action:auth.sign_in_failed result:invalid_credentials actor:${owner.email}`);
  await page.getByRole("button", { name: "Search" }).click();
  const failedRow = page.locator(`[data-testid=audit-table] tbody tr[data-action="auth.sign_in_failed"]`).first();
  await expect(failedRow).toContainText("invalid_credentials");
  await failedRow.getByText("Details").click();
  await expect(failedRow).toContainText("e2e-wrong-password");
  const byQuery = await shownIds(page);
  await page.getByRole("button", { name: "Clear" }).click();
  await expect(page.getByLabel("Query", { exact: true })).toHaveValue("");
  await page.getByLabel("Action", { exact: true }).fill("auth.sign_in_failed");
  await page.getByLabel("Result", { exact: true }).fill("invalid_credentials");
  await page.getByLabel("Actor", { exact: true }).fill(owner.email);
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(page.locator(`[data-testid=audit-table] tbody tr`).first()).toHaveAttribute(
    "data-action",
    "auth.sign_in_failed",
  );
  expect(await shownIds(page)).toEqual(byQuery);

  // Free words: a sentence, nothing run.
  await page.getByLabel("Query", { exact: true }).fill("terminate everything");
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page.getByRole("alert").filter({ hasText: '"terminate" is not a filter' })).toBeVisible();

  // The link of a filtered view opens the same view.
  await page.goto(`/audit?target_id=${sandboxId}`);
  await expect(page.getByLabel("Query", { exact: true })).toHaveValue(`resource_id:${sandboxId}`);
  await expect(page.locator("[data-testid=audit-table] tbody tr")).toHaveCount(2);

  // A phone.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto("/audit");
  await expect(page.locator("[data-testid=audit-table]")).toBeVisible();
  await lookBothWays(page, "audit-390");
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  expect(problems).toEqual([]);
});

test("the owner sets the retention and a SIEM URL (refused when internal); the change is in the log", async ({
  connected: page,
}) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto("/audit");
  await expect(page.getByText("Audit settings", { exact: true })).toBeVisible();
  await page.getByLabel("SIEM stream URL", { exact: true }).fill("https://10.0.0.7/ingest");
  await page.getByRole("button", { name: "Save URL" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "10.0.0.7" })).toBeVisible();
  await page.getByLabel("Keep events for (days)", { exact: true }).fill("90");
  await page.getByRole("button", { name: "Save retention" }).click();
  const dialog = page.getByRole("dialog", { name: "Keep events for less time?" });
  await expect(dialog).toBeVisible();
  await dialog.getByRole("button", { name: "Shorten retention" }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByLabel("Keep events for (days)", { exact: true })).toHaveValue("90");
  await page.getByLabel("Query", { exact: true }).fill("action:audit.settings_update");
  await page.getByRole("button", { name: "Search" }).click();
  const row = page.locator(`[data-testid=audit-table] tbody tr[data-action="audit.settings_update"]`).first();
  await expect(row).toBeVisible();
  await row.getByText("Details").click();
  await expect(row.getByRole("table", { name: "Changed fields" })).toContainText("retention_days");
  await lookBothWays(page, "audit-settings");
});

test("a SIEM URL's signing secret is shown once, copied with feedback, and gone after Done", async ({
  connected: page,
}) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto("/audit");
  await page.getByLabel("SIEM stream URL", { exact: true }).fill(`${SIEM}/ingest`);
  await page.getByRole("button", { name: "Save URL" }).click();
  const secret = page.getByTestId("siem-secret");
  await expect(secret).toHaveText(/^whsec_/);
  const shown = (await secret.textContent())!;
  await expect(page.getByText("Signing secret: shown once")).toBeVisible();
  await lookBothWays(page, "audit-siem-secret");

  await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
  const block = page.getByRole("status").filter({ has: secret });
  await block.getByRole("button", { name: "Copy secret" }).click();
  await expect(block.getByRole("button", { name: "Copied" })).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(shown);

  await block.getByRole("button", { name: "Done" }).click();
  await expect(secret).toHaveCount(0);
  await page.reload();
  await expect(page.getByLabel("SIEM stream URL", { exact: true })).toHaveValue(`${SIEM}/ingest`);
  await expect(page.getByText(/^Stream is off/)).toBeVisible();
  expect(await page.content()).not.toContain(shown);
});
