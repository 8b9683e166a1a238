import type { Locator, Page } from "@playwright/test";
import type { CapsView } from "../lib/usage/caps-view";
import { seriousAxeViolations } from "./a11y";
import { expect, test } from "./fixtures";
import { addMember, screenshot, signedInContext, watchForErrors } from "./helpers";

// The spend caps on /usage (issue 22), through the UI: the owner (a billing manager) sets a team cap
// and member caps, sees them with the API's figures, edits one, meets the server's cap_conflict in
// the form, removes one after confirming, and chooses where alerts go (an internal address refused
// as the API words it, an allowed loopback receiver with its secret shown once, rotated after a
// confirmation). A member sees the team's cap and their own, and no controls, with the reason.
// Axe clean, light and dark, at 1280 and 390 px. Enforcement is e2e/spend-caps.spec.ts's.
const RECEIVER = "http://127.0.0.1:45999";
test.use({
  consoleInstance: "spend-caps-ui",
  consoleEnv: { BATON_ALERT_WEBHOOK_ALLOW: RECEIVER, BATON_USAGE_INTERVAL_MS: "2000" },
});
test.describe.configure({ mode: "serial" });

const MAX = { email: "max-caps@example.com", password: "a member's correct horse battery" };
const NINA = { email: "nina-caps@example.com", password: "another member's correct horse battery" };

async function capsFromApi(page: Page): Promise<CapsView> {
  const res = await page.request.get("/api/usage/caps");
  expect(res.status()).toBe(200);
  return (await res.json()) as CapsView;
}

const row = (page: Page, userId: string | null, window: "month" | "day"): Locator =>
  page.locator(`[data-testid="spend-cap-row"][data-user-id="${userId ?? ""}"][data-window="${window}"]`);

/** Each row's figures are the API's: limit and spent (µ€), the overshoot. */
async function expectRowsMatchApi(page: Page) {
  await expect(async () => {
    await page.reload();
    const view = await capsFromApi(page);
    const rows = page.getByTestId("spend-cap-row");
    await expect(rows).toHaveCount(view.caps.length);
    for (const cap of view.caps) {
      const r = row(page, cap.user_id, cap.window);
      const figures = r.getByTestId("spend-cap-figures");
      await expect(figures).toHaveAttribute("data-limit", String(cap.limit_micro), { timeout: 1000 });
      await expect(figures).toHaveAttribute("data-spent", cap.spent_micro === null ? "" : String(cap.spent_micro), {
        timeout: 1000,
      });
      await expect(r.getByTestId("spend-cap-overshoot")).toHaveAttribute(
        "data-micro",
        String(cap.possible_overshoot_micro),
        { timeout: 1000 },
      );
    }
  }).toPass({ timeout: 30_000 });
}

async function checkA11y(page: Page, name: string, widths = [1280, 390]) {
  for (const width of widths) {
    await page.setViewportSize({ width, height: 900 });
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await expect(page.locator("html")).toHaveClass(scheme === "dark" ? /dark/ : /^(?!.*dark)/);
      expect(await seriousAxeViolations(page), `${name} at ${width} px (${scheme})`).toEqual([]);
      const [scroll, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
      expect(scroll, `${name} scrolls sideways at ${width} px`).toBeLessThanOrEqual(inner);
      await screenshot(page, `${name}-${width}-${scheme}`);
    }
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.emulateMedia({ colorScheme: "light" });
}

let maxId = "";
let ninaId = "";

test("the owner sets, edits and removes caps and chooses where alerts go", async ({ connected: page, servers }) => {
  test.setTimeout(240_000);
  maxId = addMember(servers, MAX, "member").userId;
  ninaId = addMember(servers, NINA, "member").userId;
  // The form's refusals are answers the page expects (422, and the SSRF guard's).
  const problems = watchForErrors(page, { allowStatus: (s, url) => s === 422 && /\/api\/usage\//.test(url) });
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto("/usage");
  const section = page.getByTestId("spend-caps");
  await expect(section.getByText("No spend caps yet")).toBeVisible();
  await expect(section.getByText("What Baton cannot stop")).toBeVisible();
  await expect(section.getByText(/not refused by Baton's proxy/)).toBeVisible();
  await expect(page.getByTestId("spend-caps-next-run")).toContainText("A cap change takes effect then");
  await checkA11y(page, "spend-caps-empty", [1280]);

  const dialog = page.getByRole("dialog");
  const setCap = async (opts: {
    who?: string;
    window?: "Month (UTC)" | "Day (UTC)";
    amount: string;
    action: string;
  }) => {
    await section.getByRole("button", { name: "Set a cap" }).first().click();
    await expect(dialog).toBeVisible();
    if (opts.who) await dialog.getByLabel("For", { exact: true }).selectOption({ label: opts.who });
    if (opts.window) await dialog.getByLabel(opts.window).check();
    await dialog.getByLabel("Limit (EUR)").fill(opts.amount);
    await dialog.getByRole("radio", { name: new RegExp(`^${opts.action}`) }).check();
    await dialog.getByRole("button", { name: "Set cap" }).click();
  };

  // The team's monthly cap, alert only; the form refuses a bad amount itself, nothing sent.
  await section.getByRole("button", { name: "Set a cap" }).click();
  await dialog.getByLabel("Limit (EUR)").fill("20.005");
  await dialog.getByRole("button", { name: "Set cap" }).click();
  await expect(dialog.getByText(/in whole cents \(12.50\)/)).toBeVisible();
  await expect(dialog.getByText("Notifies only: nothing is refused or paused.")).toBeVisible();
  await expect(dialog.getByText(/running sandboxes keep running/)).toBeVisible();
  await expect(dialog.getByText(/clears their auto-resume/)).toBeVisible();
  await screenshot(page, "spend-caps-form");
  expect(await seriousAxeViolations(page), "the form").toEqual([]);
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();

  await setCap({ amount: "20", action: "Alert only" });
  await expect(dialog).toBeHidden();
  await expect(row(page, null, "month")).toContainText("€20.00");
  // Max's monthly cap (pause) and Nina's daily cap (block).
  await setCap({ who: "member (max-caps@example.com)", amount: "10.50", action: "Pause" });
  await expect(dialog).toBeHidden();
  await setCap({ who: "member (nina-caps@example.com)", window: "Day (UTC)", amount: "5", action: "Block" });
  await expect(dialog).toBeHidden();

  let view = await capsFromApi(page);
  expect(view.caps.map((c) => [c.user_id, c.window, c.limit_micro, c.action]).sort()).toEqual(
    [
      [null, "month", 20_000_000, "alert"],
      [maxId, "month", 10_500_000, "pause"],
      [ninaId, "day", 5_000_000, "block"],
    ].sort(),
  );
  await expectRowsMatchApi(page);
  await expect(row(page, maxId, "month")).toContainText("€10.50");
  await expect(row(page, maxId, "month")).toContainText("Pause");
  await expect(row(page, ninaId, "day")).toContainText("Day (UTC)");
  // The job has run (every 2 s here): spent, a percentage and the status in words.
  await expect(async () => {
    await page.reload();
    await expect(row(page, null, "month").getByTestId("spend-cap-status")).toHaveText("Under", { timeout: 2000 });
  }).toPass({ timeout: 30_000 });
  await expect(row(page, null, "month")).toContainText("€0.00 of €20.00 (0 %)");

  // A member's cap above the team's: the server's 422 cap_conflict, in the form.
  await setCap({ who: "member (nina-caps@example.com)", amount: "30", action: "Block" });
  await expect(dialog.getByTestId("spend-cap-error")).toHaveText(
    "A member's monthly cap (€30.00) cannot be higher than the team's (€20.00).",
  );
  await screenshot(page, "spend-caps-conflict");
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await expect(dialog).toBeHidden();

  // Edit the team's cap: €25, block.
  await row(page, null, "month").getByRole("button", { name: /^Edit/ }).click();
  await expect(dialog.getByLabel("Limit (EUR)")).toHaveValue("20.00");
  await dialog.getByLabel("Limit (EUR)").fill("25");
  await dialog.getByRole("radio", { name: /^Block/ }).check();
  await dialog.getByRole("button", { name: "Save cap" }).click();
  await expect(dialog).toBeHidden();
  await expect(row(page, null, "month")).toContainText("€25.00");
  view = await capsFromApi(page);
  expect(view.caps.find((c) => c.user_id === null)).toMatchObject({ limit_micro: 25_000_000, action: "block" });

  // Remove Nina's cap: Cancel keeps it; confirming removes it.
  await row(page, ninaId, "day")
    .getByRole("button", { name: /^Remove/ })
    .click();
  await expect(dialog).toContainText("Remove this spend cap?");
  await expect(dialog).toContainText("daily cap of €5.00");
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await expect(row(page, ninaId, "day")).toBeVisible();
  await row(page, ninaId, "day")
    .getByRole("button", { name: /^Remove/ })
    .click();
  await dialog.getByRole("button", { name: "Remove cap" }).click();
  await expect(dialog).toBeHidden();
  await expect(row(page, ninaId, "day")).toHaveCount(0);
  expect((await capsFromApi(page)).caps.some((c) => c.user_id === ninaId)).toBe(false);
  // A cap for Nina again (monthly, under the team's), for the member's view below.
  await setCap({ who: "member (nina-caps@example.com)", amount: "7", action: "Alert only" });
  await expect(dialog).toBeHidden();
  await expectRowsMatchApi(page);

  // Where alerts go: an internal address is refused as the API says it.
  const alerts = page.getByTestId("spend-alert-settings");
  const url = alerts.getByLabel("Webhook URL");
  await url.fill("https://10.1.2.3/hook");
  await alerts.getByRole("button", { name: "Save URL" }).click();
  await expect(alerts.getByTestId("spend-alert-error")).toContainText("may only go to public addresses");
  // The loopback receiver the operator allowed: saved, its secret shown once.
  await url.fill(`${RECEIVER}/hook`);
  await alerts.getByRole("button", { name: "Save URL" }).click();
  const secret = alerts.getByTestId("spend-alert-secret");
  await expect(secret).toHaveText(/^whsec_/);
  await expect(alerts.getByRole("button", { name: "Copy secret" })).toBeVisible();
  await expect(alerts.getByText("Signing secret: shown once")).toBeVisible();
  const first = await secret.textContent();
  await screenshot(page, "spend-caps-secret");
  // E-mail off.
  await alerts.getByLabel("E-mail the team's owners and admins").uncheck();
  await expect
    .poll(
      async () =>
        (await (await page.request.get("/api/usage/alerts")).json()) as { email: boolean; webhook_url: string },
    )
    .toMatchObject({ email: false, webhook_url: `${RECEIVER}/hook` });
  // Not shown again after a reload.
  await page.reload();
  await expect(alerts.getByLabel("Webhook URL")).toHaveValue(`${RECEIVER}/hook`);
  await expect(alerts.getByTestId("spend-alert-secret")).toHaveCount(0);
  await expect(alerts.getByText("Signing secret set.")).toBeVisible();
  // Rotate, after a confirmation: a new secret, shown once.
  await alerts.getByRole("button", { name: "New signing secret" }).click();
  await expect(dialog).toContainText("Make a new signing secret?");
  await dialog.getByRole("button", { name: "Make a new secret" }).click();
  await expect(dialog).toBeHidden();
  await expect(alerts.getByTestId("spend-alert-secret")).toHaveText(/^whsec_/);
  expect(await alerts.getByTestId("spend-alert-secret").textContent()).not.toBe(first);

  await checkA11y(page, "spend-caps-owner");
  expect(problems).toEqual([]);
});

test("a member sees the team's cap and their own, how close each is, and no controls", async ({ browser, baseURL }) => {
  expect(maxId, "the first test made the members").not.toBe("");
  const context = await signedInContext(browser, baseURL!, MAX);
  const page = await context.newPage();
  const problems = watchForErrors(page);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto("/usage");
  const section = page.getByTestId("spend-caps");
  const view = await capsFromApi(page);
  expect(view).toMatchObject({ scope: "self", can_manage: false });
  expect(view.caps.map((c) => c.user_id).sort()).toEqual([maxId, null].sort());
  await expect(section.getByTestId("spend-cap-row")).toHaveCount(2);
  await expect(row(page, null, "month")).toContainText("€25.00");
  await expect(row(page, maxId, "month")).toContainText("€10.50");
  await expect(row(page, maxId, "month").getByRole("rowheader")).toContainText("You");
  await expect(row(page, ninaId, "month")).toHaveCount(0);
  await expectRowsMatchApi(page);
  await expect(section.getByRole("button", { name: "Set a cap" })).toHaveCount(0);
  await expect(section.getByRole("button", { name: /^(Edit|Remove)/ })).toHaveCount(0);
  await expect(section.getByTestId("read-only")).toContainText("Members can't set spend caps");
  await expect(page.getByTestId("spend-alert-settings")).toHaveCount(0);
  expect((await page.request.get("/api/usage/alerts")).status()).toBe(403);
  await checkA11y(page, "spend-caps-member");
  expect(problems).toEqual([]);
  await context.close();
});
