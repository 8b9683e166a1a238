import type { Page } from "@playwright/test";
import { seriousAxeViolations } from "./a11y";
import { expect, test } from "./fixtures";
import { screenshot, watchForErrors } from "./helpers";

// The list's "Created · by" column (when, and by whom) and its "Only sandboxes I created" toggle
// (issue 22), against the real engine: one sandbox made through the console (stamped baton.user by
// its proxy), one made straight on the engine with the account's token (no stamp: "outside
// Baton"), and one made on the engine with a stamp naming a user who is not in the team ("Former
// member"). Its own console instance, so no other spec's sandboxes are in the list.
test.use({ consoleInstance: "sandboxes-created-by" });

const table = (page: Page) => page.getByRole("table", { name: "Sandboxes" });
const row = (page: Page, id: string) => table(page).locator(`[role=row][data-sandbox-id="${id}"]`);
const createdBy = (page: Page, id: string) => row(page, id).getByTestId("created-by");

async function checkA11yLightAndDark(page: Page, name: string) {
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await expect(page.locator("html")).toHaveClass(scheme === "dark" ? /dark/ : /^(?!.*dark)/);
    expect(await seriousAxeViolations(page), `axe on ${name} (${scheme})`).toEqual([]);
    await screenshot(page, `${name}-${scheme}`);
  }
  await page.emulateMedia({ colorScheme: "light" });
}

test("the list names each sandbox's creator; 'Only sandboxes I created' hides the rest and survives a reload", async ({
  connected: page,
  baseURL,
  servers,
}) => {
  const problems = watchForErrors(page);
  const viaConsole = await page.request.post("/api/v1/sandboxes", {
    data: { template: "python-3.12", timeout_seconds: 600 },
    headers: { origin: baseURL! },
  });
  expect(viaConsole.status(), await viaConsole.text()).toBe(201);
  const made = (await viaConsole.json()) as { id: string; metadata: Record<string, string> };
  const ownerId = made.metadata["baton.user"]!;
  expect(ownerId).toBeTruthy();

  // Straight on the engine (as an SDK or curl would): no stamp.
  const outside = await servers.engine.api("POST", "/sandboxes", { template: "python-3.12", timeout_seconds: 600 });
  expect(outside.status).toBe(201);
  const outsideId = outside.body.id as string;
  expect(outside.body.metadata ?? {}).not.toHaveProperty("baton.user");
  // A stamp naming someone who is not (or no longer) in the team.
  const former = await servers.engine.api("POST", "/sandboxes", {
    template: "python-3.12",
    timeout_seconds: 600,
    metadata: { "baton.user": "usr_left_the_team", "baton.team": String(made.metadata["baton.team"]) },
  });
  expect(former.status).toBe(201);
  const formerId = former.body.id as string;

  await page.goto("/sandboxes");
  await expect(table(page).getByRole("columnheader", { name: "Created · by" })).toBeVisible();
  await expect(createdBy(page, made.id)).toHaveText("You");
  await expect(createdBy(page, outsideId)).toHaveText("outside Baton");
  await expect(createdBy(page, formerId)).toHaveText("Former member");
  // The stamp is the column, not a metadata chip.
  await expect(row(page, made.id)).not.toContainText("baton.user");
  await checkA11yLightAndDark(page, "sandboxes-created-by");

  // The toggle, by keyboard: Enter turns it on; the URL carries it (?creator=<own id>).
  const mine = page.getByRole("button", { name: "Only sandboxes I created" });
  await expect(mine).toHaveAttribute("aria-pressed", "false");
  await mine.focus();
  await page.keyboard.press("Enter");
  await expect(mine).toHaveAttribute("aria-pressed", "true");
  await expect(page).toHaveURL(new RegExp(`[?&]creator=${ownerId}(&|$)`));
  await expect(row(page, made.id)).toBeVisible();
  await expect(row(page, outsideId)).toHaveCount(0);
  await expect(row(page, formerId)).toHaveCount(0);
  await expect(page.getByTestId("creator-filter")).toHaveText(/Created by you/);

  // A reload keeps the filter.
  await page.reload();
  await expect(page.getByRole("button", { name: "Only sandboxes I created" })).toHaveAttribute("aria-pressed", "true");
  await expect(row(page, made.id)).toBeVisible();
  await expect(createdBy(page, made.id)).toHaveText("You");
  await expect(row(page, outsideId)).toHaveCount(0);
  await checkA11yLightAndDark(page, "sandboxes-created-by-mine");

  // Space turns it off again: everyone's sandboxes are back, and the URL has no creator.
  await page.getByRole("button", { name: "Only sandboxes I created" }).focus();
  await page.keyboard.press("Space");
  await expect(row(page, outsideId)).toBeVisible();
  await expect(page).not.toHaveURL(/[?&]creator=/);

  // On a 390 px phone the page does not scroll sideways (the table scrolls in its own box).
  await page.setViewportSize({ width: 390, height: 844 });
  await expect(createdBy(page, outsideId)).toHaveText("outside Baton");
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await screenshot(page, "sandboxes-created-by-390-light");

  for (const id of [made.id, outsideId, formerId])
    expect((await servers.engine.api("DELETE", `/sandboxes/${id}`)).status).toBe(204);
  expect(problems).toEqual([]);
});

// "via API token <name>" and "via MCP (<name>)" once truncated to "You via API t…" in a column a
// few words wide: now a short badge ("API token", "MCP") that is never cut, with the full text as
// the tooltip and as what the cell reads (its text and accessible name), at 1280 and 390 px, light
// and dark.
test("a sandbox made with an API token or over MCP says so, readably, in the list", async ({
  connected: page,
  baseURL,
  playwright,
  servers,
}) => {
  const problems = watchForErrors(page);
  const name = "nightly deploy pipeline (staging)";
  const made = await page.request.post("/api/tokens", {
    headers: { origin: baseURL! },
    data: { name, scope: "write", expires_in_days: 7 },
  });
  expect(made.status(), await made.text()).toBe(201);
  const { token } = (await made.json()) as { token: string };
  const api = await playwright.request.newContext({ baseURL, extraHTTPHeaders: { authorization: `Bearer ${token}` } });
  const viaToken = await api.post("/api/v1/sandboxes", { data: { template: "python-3.12", timeout_seconds: 600 } });
  expect(viaToken.status(), await viaToken.text()).toBe(201);
  const tokenSbx = (await viaToken.json()) as { id: string; metadata: Record<string, string> };
  await api.dispose();
  // The MCP endpoint stamps the same way with "mcp" (lib/sandbox-creator.ts): made on the engine here.
  const viaMcp = await servers.engine.api("POST", "/sandboxes", {
    template: "python-3.12",
    timeout_seconds: 600,
    metadata: { ...tokenSbx.metadata, "baton.via": "mcp" },
  });
  expect(viaMcp.status).toBe(201);
  const mcpId = viaMcp.body.id as string;

  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto("/sandboxes");
  const cases = [
    { id: tokenSbx.id, text: `You via API token ${name}`, badge: "API token" },
    { id: mcpId, text: `You via MCP (${name})`, badge: "MCP" },
  ];
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 844 });
    for (const c of cases) {
      const cell = createdBy(page, c.id);
      await cell.scrollIntoViewIfNeeded();
      await expect(cell).toHaveText(c.text);
      await expect(cell).toHaveAttribute("title", `Created by ${c.text}`);
      const badge = cell.locator(".via-badge");
      await expect(badge).toBeVisible();
      await expect(badge).toHaveAttribute("title", c.text.replace(/^You /, ""));
      // The badge's words are on screen and not cut: it ends inside the cell.
      expect(await badge.evaluate((el) => getComputedStyle(el, "::before").content)).toContain(c.badge);
      const [b, box] = [await badge.boundingBox(), await cell.boundingBox()];
      expect(b!.width).toBeGreaterThan(8);
      expect(b!.x + b!.width).toBeLessThanOrEqual(box!.x + box!.width + 0.5);
    }
    if (width === 390) expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await checkA11yLightAndDark(page, `sandboxes-created-via-${width}`);
  }

  for (const id of [tokenSbx.id, mcpId])
    expect((await servers.engine.api("DELETE", `/sandboxes/${id}`)).status).toBe(204);
  expect(problems).toEqual([]);
});
