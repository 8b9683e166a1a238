import type { Page } from "@playwright/test";
import { seriousAxeViolations } from "./a11y";
import { expect, test } from "./fixtures";
import { screenshot, watchForErrors } from "./helpers";

// The webhooks pages against the real engine. The receiver is https://example.invalid/hook: the
// engine accepts it when saving (a public-looking https URL; names are judged at connect time), and
// a .invalid name never resolves, so every attempt fails at DNS and no test traffic leaves the
// machine. The page must show that failed attempt as it is.
test.use({ consoleInstance: "webhooks" });

const RECEIVER = "https://example.invalid/hook";

async function axeBothThemes(page: Page, name: string) {
  await page.emulateMedia({ colorScheme: "light" });
  await screenshot(page, name);
  expect(await seriousAxeViolations(page), `${name}, light`).toEqual([]);
  await page.emulateMedia({ colorScheme: "dark" });
  await expect(page.locator("html")).toHaveClass(/(^|\s)dark(\s|$)/);
  await screenshot(page, `${name}-dark`);
  expect(await seriousAxeViolations(page), `${name}, dark`).toEqual([]);
  await page.emulateMedia({ colorScheme: "light" });
}

/** The secret must be nowhere once its dialog is closed: not in the page, not in the browser's storage. */
async function expectSecretGone(page: Page, secret: string) {
  expect(await page.content()).not.toContain(secret);
  const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }));
  expect(stored).not.toContain(secret);
}

test("create (secret shown once), refused URL, disable/enable, test → failed attempt, redeliver, rotate, delete", async ({
  connected: page,
  servers,
}) => {
  test.setTimeout(180_000);
  // The refused URL is the engine's 422, on purpose; once deleted, reads of the webhook answer 404.
  let deletedId: string | null = null;
  const problems = watchForErrors(page, {
    allowStatus: (status, url) => {
      const p = new URL(url).pathname;
      if (status === 422 && p === "/api/v1/webhooks") return true;
      return status === 404 && deletedId !== null && p.startsWith(`/api/v1/webhooks/${deletedId}`);
    },
  });

  await page.emulateMedia({ colorScheme: "light" });
  await page.goto("/webhooks");
  await expect(page.getByRole("heading", { level: 1, name: "Webhooks" })).toBeVisible();
  await expect(page.getByRole("heading", { name: "No webhooks yet" })).toBeVisible();
  await axeBothThemes(page, "webhooks-empty");

  // --- create: the browser's check, then the engine's refusal, then a receiver it accepts ---
  await page.getByRole("button", { name: "Create webhook" }).click();
  const dialog = page.getByRole("dialog", { name: "Create a webhook" });
  const url = dialog.getByLabel("Receiver URL");
  await url.fill("ftp://hooks.example.com/x");
  await dialog.getByRole("button", { name: "Create webhook" }).click();
  await expect(dialog.getByText("the URL must start with https://, not ftp://")).toBeVisible();
  await expect(url).toHaveAttribute("aria-invalid", "true");

  await url.fill("http://127.0.0.1:9/x");
  await dialog.getByRole("button", { name: "Create webhook" }).click();
  await expect(dialog.getByText(/The engine refused this URL: 127\.0\.0\.1 is a loopback address/)).toBeVisible();
  await expect(url).toBeFocused();
  expect((await servers.engine.api<unknown[]>("GET", "/webhooks")).body).toEqual([]);

  await url.fill(RECEIVER);
  await dialog.getByLabel("Only these").check();
  await dialog.getByLabel("sandbox.paused").check();
  await dialog.getByLabel("sandbox.expired").check();
  await dialog.getByLabel("Description (optional)").fill("E2E receiver");
  await dialog.getByRole("button", { name: "Show code" }).click();
  await expect(dialog.getByTestId("create-webhook-code")).toContainText(
    `Webhook.create("${RECEIVER}", event_types=["sandbox.paused", "sandbox.expired"], description="E2E receiver")`,
  );
  await dialog.getByRole("tab", { name: "curl" }).click();
  await expect(dialog.getByTestId("create-webhook-code")).toContainText("Idempotency-Key");
  await expect(dialog.getByTestId("create-webhook-code")).not.toContainText("whsec_");
  await dialog.getByRole("button", { name: "Create webhook" }).click();

  const secretBox = dialog.getByTestId("webhook-secret");
  await expect(secretBox).toHaveValue(/^whsec_/);
  const secret = await secretBox.inputValue();
  await expect(dialog.getByText("Copy this secret now: it will not be shown again")).toBeVisible();
  await dialog.getByText("How to verify a delivery's signature").click();
  await expect(dialog.getByTestId("verify-code")).toContainText("hmac.compare_digest");
  await axeBothThemes(page, "webhooks-secret");

  const [created] = (
    await servers.engine.api<{ id: string; event_types: string[]; secret?: string }[]>("GET", "/webhooks")
  ).body;
  expect(created).toMatchObject({ event_types: ["sandbox.paused", "sandbox.expired"], description: "E2E receiver" });
  const id = created!.id;

  await dialog.getByRole("button", { name: "I have stored the secret" }).click();
  await expect(dialog).toBeHidden();
  const row = page.getByTestId("webhook-row").filter({ hasText: "E2E receiver" });
  await expect(row).toContainText(RECEIVER);
  await expect(row).toContainText("sandbox.paused, sandbox.expired");
  await expect(row.getByTestId("webhook-state")).toHaveText("Enabled");
  await expect(row).toContainText("none yet");
  await expectSecretGone(page, secret);
  await axeBothThemes(page, "webhooks-list");

  // --- the webhook's page: the secret is not shown again, not even after a reload ---
  await row.getByRole("link").click();
  await expect(page).toHaveURL(new RegExp(`/webhooks/${id}(?:[?&]team=[a-z0-9-]+)?$`));
  await expect(page.getByRole("heading", { level: 1, name: "E2E receiver" })).toBeVisible();
  await expect(page.getByText("Shown once, at create or rotate.")).toBeVisible();
  await expectSecretGone(page, secret);
  await page.reload();
  await expect(page.getByRole("heading", { level: 1, name: "E2E receiver" })).toBeVisible();
  await expectSecretGone(page, secret);

  // --- disable / enable ---
  const state = page.getByTestId("webhook-state");
  await page.getByRole("button", { name: "Disable", exact: true }).click();
  await expect(state).toHaveText("Disabled");
  await expect(page.getByText("disabled by request")).toBeVisible();
  expect((await servers.engine.api<{ enabled: boolean }>("GET", `/webhooks/${id}`)).body.enabled).toBe(false);
  // A disabled webhook is sent nothing: no test either.
  await expect(page.getByText("Nothing is sent: no events, tests or redeliveries.")).toBeVisible();
  await expect(page.getByRole("button", { name: "Send test" })).toBeDisabled();
  await page.getByRole("button", { name: "Enable", exact: true }).click();
  await expect(state).toHaveText("Enabled");
  expect((await servers.engine.api<{ enabled: boolean }>("GET", `/webhooks/${id}`)).body.enabled).toBe(true);

  // --- send a test: the delivery appears, opened, with its failed attempt said as it is ---
  await expect(page.getByText("No deliveries yet.")).toBeVisible();
  await page.getByRole("button", { name: "Send test" }).click();
  const deliveries = page.getByTestId("delivery-row");
  await expect(deliveries).toHaveCount(1);
  await expect(deliveries.first()).toContainText("webhook.test");
  const panel = page.getByTestId("delivery-panel");
  await expect(panel.getByTestId("delivery-error")).toContainText("example.invalid", { timeout: 30_000 });
  await expect(deliveries.first()).toContainText(/retrying|failed/);
  await expect(deliveries.first()).toContainText("no answer");
  await expect(panel.getByTestId("delivery-request")).toContainText('"type": "webhook.test"');
  await expect(panel.getByTestId("delivery-response")).toHaveText("No answer was received.");
  const [firstDelivery] = (
    await servers.engine.api<{ id: string; status: string; error: string }[]>("GET", `/webhooks/${id}/deliveries`)
  ).body;
  expect(firstDelivery!.error).toContain("example.invalid");
  await axeBothThemes(page, "webhook-detail");

  // --- redeliver: a second delivery of the same event ---
  await panel.getByRole("button", { name: "Redeliver" }).click();
  await expect(deliveries).toHaveCount(2);
  await expect(deliveries.first()).toContainText("redelivery");
  const redelivered = (
    await servers.engine.api<{ redelivered_from: string | null; event_id: string }[]>(
      "GET",
      `/webhooks/${id}/deliveries`,
    )
  ).body;
  expect(redelivered[0]!.redelivered_from).toBe(firstDelivery!.id);

  // --- the log's filter asks the engine for one status ---
  const filter = page.getByTestId("delivery-filter");
  await filter.selectOption({ label: "Succeeded" });
  await expect(page.getByText("No succeeded deliveries.")).toBeVisible();
  await filter.selectOption({ label: "All deliveries" });
  await expect(deliveries).toHaveCount(2);

  // --- every action has its code ---
  const select = page.getByTestId("action-code-select");
  await select.selectOption({ label: "Send a test" });
  await expect(page.getByTestId("action-code")).toContainText(`/v1/webhooks/${id}/test`);
  await select.selectOption({ label: "Verify a delivery's signature (receiver)" });
  await expect(page.getByTestId("action-code")).toContainText("X-Orkestr-Signature");

  // --- rotate: confirmed first, the new secret shown once ---
  await page.getByRole("button", { name: "Rotate secret…" }).click();
  const rotate = page.getByRole("dialog", { name: "Rotate the signing secret" });
  await expect(rotate.getByText(/stops working/)).toBeVisible();
  await rotate.getByRole("button", { name: "Rotate secret" }).click();
  const rotatedBox = rotate.getByTestId("webhook-secret");
  await expect(rotatedBox).toHaveValue(/^whsec_/);
  const rotated = await rotatedBox.inputValue();
  expect(rotated).not.toBe(secret);
  await rotate.getByRole("button", { name: "I have stored the secret" }).click();
  await expect(rotate).toBeHidden();
  await expectSecretGone(page, rotated);

  // --- edit: only what changed is sent; the page and the engine agree ---
  await page.getByRole("button", { name: "Edit…" }).click();
  const edit = page.getByRole("dialog", { name: "Edit webhook" });
  await expect(edit.getByLabel("Receiver URL")).toHaveValue(RECEIVER);
  await expect(edit.getByLabel("sandbox.paused")).toBeChecked();
  await edit.getByLabel("volume.moved").check();
  await edit.getByLabel("Description (optional)").fill("E2E receiver, edited");
  await edit.getByRole("button", { name: "Show code" }).click();
  await edit.getByRole("tab", { name: "curl" }).click();
  await expect(edit.getByTestId("edit-webhook-code")).toContainText(`curl -X PATCH`);
  await expect(edit.getByTestId("edit-webhook-code")).not.toContainText('"url"');
  await edit.getByRole("button", { name: "Save changes" }).click();
  await expect(edit).toBeHidden();
  await expect(page.getByRole("heading", { level: 1, name: "E2E receiver, edited" })).toBeVisible();
  await expect(page.getByText("sandbox.paused, sandbox.expired, volume.moved")).toBeVisible();
  expect(
    (await servers.engine.api<{ description: string; event_types: string[] }>("GET", `/webhooks/${id}`)).body,
  ).toMatchObject({
    description: "E2E receiver, edited",
    event_types: ["sandbox.paused", "sandbox.expired", "volume.moved"],
  });

  // --- delete: confirmed, then gone everywhere ---
  await page.getByRole("button", { name: "Delete…" }).click();
  const del = page.getByRole("dialog", { name: "Delete this webhook?" });
  await expect(del).toContainText(RECEIVER);
  await del.getByRole("button", { name: "Cancel" }).click();
  await expect(del).toBeHidden();
  expect((await servers.engine.api("GET", `/webhooks/${id}`)).status).toBe(200);
  await page.getByRole("button", { name: "Delete…" }).click();
  deletedId = id;
  await del.getByRole("button", { name: "Delete webhook" }).click();
  await expect(page).toHaveURL(/\/webhooks(?:[?&]team=[a-z0-9-]+)?$/);
  await expect(page.getByRole("heading", { name: "No webhooks yet" })).toBeVisible();
  expect((await servers.engine.api("GET", `/webhooks/${id}`)).status).toBe(404);

  // An id that does not exist (or was deleted) is said so, not a crash.
  await page.goto(`/webhooks/${id}`);
  await expect(page.getByRole("heading", { name: "No such webhook" })).toBeVisible();

  expect(problems).toEqual([]);
});

test("the delivery log loads older deliveries a page at a time", async ({ connected: page, servers }) => {
  test.setTimeout(120_000);
  const problems = watchForErrors(page);
  const created = await servers.engine.api<{ id: string }>("POST", "/webhooks", {
    url: RECEIVER,
    description: "Paged log",
  });
  expect(created.status).toBe(201);
  const id = created.body.id;
  // One more than a page (20): each fails at DNS, so nothing leaves the machine.
  for (let i = 0; i < 21; i++) expect((await servers.engine.api("POST", `/webhooks/${id}/test`)).status).toBe(202);

  await page.goto(`/webhooks/${id}`);
  const rows = page.getByTestId("delivery-row");
  await expect(rows).toHaveCount(20);
  await expect(page.getByText("20 deliveries loaded so far")).toBeVisible();
  await page.getByRole("button", { name: "Load older deliveries" }).click();
  await expect(rows).toHaveCount(21);
  await expect(page.getByText("21 deliveries, all loaded")).toBeVisible();
  await expect(page.getByRole("button", { name: "Load older deliveries" })).toHaveCount(0);
  // Keyboard: a row opens with Enter on its Details button.
  await rows
    .last()
    .getByRole("button", { name: /Details/ })
    .focus();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("delivery-panel").getByTestId("delivery-request")).toContainText(
    '"type": "webhook.test"',
  );
  // On a phone the tables scroll sideways: still axe clean, light and dark.
  await page.setViewportSize({ width: 390, height: 844 });
  // The tables scroll inside their own regions: the page itself never scrolls sideways.
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await axeBothThemes(page, "webhook-detail-phone");
  expect(problems).toEqual([]);
  await page.goto("about:blank");
  await servers.engine.api("DELETE", `/webhooks/${id}`);
});

test("a deleted webhook leaves the list at once: its row is never drawn again and nothing reads it any more", async ({
  connected: page,
  servers,
}) => {
  const created = await servers.engine.api<{ id: string }>("POST", "/webhooks", {
    url: RECEIVER,
    description: "Short-lived",
  });
  expect(created.status, created.text).toBe(201);
  const id = created.body.id;

  // From the delete on: every read of this webhook (its page, its deliveries), and every console error.
  let deleting = false;
  const readsAfter: string[] = [];
  const errorsAfter: string[] = [];
  let inFlight = 0;
  const ours = (url: string) => new URL(url).pathname.startsWith(`/api/v1/webhooks/${id}`);
  page.on("request", (r) => {
    if (!deleting || !ours(r.url()) || r.method() !== "GET") return;
    inFlight++;
    readsAfter.push(`GET ${new URL(r.url()).pathname}`);
  });
  const settled = (r: { url(): string; method(): string }) => {
    if (deleting && ours(r.url()) && r.method() === "GET") inFlight--;
  };
  page.on("requestfinished", settled);
  page.on("requestfailed", settled);
  page.on("response", (r) => {
    if (deleting && r.status() >= 400) errorsAfter.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
  });
  page.on("console", (m) => {
    if (deleting && m.type() === "error") errorsAfter.push(`console.error: ${m.text()}`);
  });

  // The list first (so its answer and the row's last delivery are in the page's cache), then the
  // webhook's page by its link: the way back to the list after the delete is a client-side one.
  await page.goto("/webhooks");
  const row = page.getByTestId("webhook-row").filter({ hasText: "Short-lived" });
  await expect(row).toContainText("none yet");
  await row.getByRole("link").click();
  await expect(page.getByRole("heading", { level: 1, name: "Short-lived" })).toBeVisible();

  // A row of this webhook drawn on the list at any moment after the delete is the flash.
  await page.evaluate((webhookId) => {
    const w = window as unknown as { __deletedRowSeen: boolean };
    w.__deletedRowSeen = false;
    new MutationObserver(() => {
      if (
        location.pathname === "/webhooks" &&
        document.querySelector(`[data-testid="webhook-row"] a[href$="/webhooks/${webhookId}"]`)
      )
        w.__deletedRowSeen = true;
    }).observe(document.documentElement, { childList: true, subtree: true });
  }, id);

  await page.getByRole("button", { name: "Delete…" }).click();
  deleting = true;
  await page
    .getByRole("dialog", { name: "Delete this webhook?" })
    .getByRole("button", { name: "Delete webhook" })
    .click();
  await expect(page).toHaveURL(/\/webhooks(?:[?&]team=[a-z0-9-]+)?$/);
  await expect(page.getByRole("heading", { name: "No webhooks yet" })).toBeVisible();
  expect((await servers.engine.api("GET", `/webhooks/${id}`)).status).toBe(404);
  // Whatever was asked of the deleted webhook has been answered before judging.
  await expect.poll(() => inFlight).toBe(0);

  const rowSeen = await page.evaluate(() => (window as unknown as { __deletedRowSeen: boolean }).__deletedRowSeen);
  expect.soft(rowSeen, "the deleted webhook's row was drawn on the list again").toBe(false);
  expect.soft(readsAfter, "reads of the deleted webhook").toEqual([]);
  expect.soft(errorsAfter, "errors after the delete").toEqual([]);
});
