import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { screenshot, watchForErrors } from "./helpers";

// Every resource list on a 390 px phone, with at least one row in it: the table scrolls inside its
// own box and the page never scrolls sideways. A screen-reader-only cell (the "Actions" header) is
// absolutely positioned; in a scroll box that is not itself positioned it is laid out against the
// page instead, at the table's far edge, and widened the whole document. Sizes read in binary units
// (KiB, MiB, GiB) on every list, as the engine counts them.
test.use({ consoleInstance: "lists-phone" });

const PHONE = { width: 390, height: 844 };
const RECEIVER = "https://example.invalid/hook";

async function expectNoSidewaysScroll(page: Page, where: string) {
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  expect
    .soft(width, `${where}: the page is ${width} px wide on a ${PHONE.width} px screen`)
    .toBeLessThanOrEqual(PHONE.width);
}

test("on a 390 px phone no resource list scrolls the page sideways, and sizes read in binary units", async ({
  connected: page,
  servers,
}) => {
  test.setTimeout(240_000);
  const problems = watchForErrors(page);
  const api = servers.engine.api.bind(servers.engine);

  // One of each: a sandbox (and a snapshot of it), a volume, a custom template and a webhook.
  const sandbox = await api<{ id: string }>("POST", "/sandboxes", { template: "python-3.12", timeout_seconds: 600 });
  expect(sandbox.status, sandbox.text).toBe(201);
  const snap = await api("POST", `/sandboxes/${sandbox.body.id}/snapshots`, { name: "phone-width" });
  expect(snap.status, snap.text).toBe(201);
  const volume = await api("POST", "/volumes", { name: "phone-width", size_gb: 1 });
  expect(volume.status, volume.text).toBe(201);
  const template = await api("POST", "/templates", {
    name: "phone-width",
    base_image: "python-3.12",
    steps: ["echo hi > /opt/phone-width"],
  });
  expect(template.status, template.text).toBe(202);
  const webhook = await api("POST", "/webhooks", { url: RECEIVER, description: "Phone width" });
  expect(webhook.status, webhook.text).toBe(201);

  await page.setViewportSize(PHONE);
  const lists: { path: string; row: string }[] = [
    { path: "/sandboxes", row: `[role=row][data-sandbox-id="${sandbox.body.id}"]` },
    { path: "/snapshots", row: '[data-testid="snapshot-row"]' },
    { path: "/volumes", row: '[data-testid="volume-row"]' },
    { path: "/templates", row: '[data-testid="template-row"]' },
    { path: "/webhooks", row: '[data-testid="webhook-row"]' },
  ];
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const { path, row } of lists) {
      await page.goto(path);
      await expect(page.locator(row).first()).toBeVisible();
      await expectNoSidewaysScroll(page, `${path} (${scheme})`);
      // Decimal units would be a second way of counting the same bytes on another page.
      expect
        .soft(await page.locator("main").innerText(), `${path}: sizes in binary units`)
        .not.toMatch(/\d\s?[KMGT]B\b/);
      await screenshot(page, `lists-phone${path.replace("/", "-")}-${scheme}`);
    }
  }
  // The same lists on a desktop, for the screenshots (a row each, nothing clipped in its column).
  await page.setViewportSize({ width: 1280, height: 800 });
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const { path, row } of lists) {
      await page.goto(path);
      await expect(page.locator(row).first()).toBeVisible();
      // The sandbox's cost so far, once its telemetry has come in.
      if (path === "/sandboxes") await expect(page.locator(row)).toContainText("€", { timeout: 20_000 });
      await screenshot(page, `lists-desktop${path.replace("/", "-")}-${scheme}`);
    }
  }
  expect(problems).toEqual([]);
});
