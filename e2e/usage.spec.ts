import type { Page } from "@playwright/test";
import fs from "node:fs";
import { formatEur } from "../lib/format";
import { computeCostEur } from "../lib/pricing";
import { parseCsv } from "../lib/usage/csv";
import { thisMonth } from "../lib/usage/range";
import { SEED_RATES, type UsageReport } from "../lib/usage/report";
import { seriousAxeViolations } from "./a11y";
import { expect, test } from "./fixtures";
import { screenshot, teamHref, watchForErrors } from "./helpers";

// The /usage page against the real engine (issue 22): known work (`yes > /dev/null` for a few
// seconds in a small sandbox, then a terminate: the final reading) shows on the page with the
// engine's own figures (GET /v1/sandboxes/usage) to the cent; each table's CSV has exactly the rows
// the table shows; the page is axe clean, light and dark, at 1280 and 390 px, without sideways
// scroll. Its own console instance (no other spec's sandboxes in its figures), with Baton's usage
// job reading every 2 s.
test.use({ consoleInstance: "usage", consoleEnv: { BATON_USAGE_INTERVAL_MS: "2000" } });
test.describe.configure({ mode: "serial" });

const origin = (baseURL: string) => ({ origin: baseURL });

/** "€1,234.50" / "€0.0042" → the number shown. */
function euros(text: string): number {
  const m = /(-?)€([\d,]+(?:\.\d+)?)/.exec(text);
  if (!m) throw new Error(`no amount in "${text}"`);
  return Number(`${m[1]}${m[2]!.replace(/,/g, "")}`);
}

/** The table's rows as the CSV would have them: each cell's data-value, header row first. */
async function tableRows(page: Page, name: string): Promise<string[][]> {
  const table = page.getByTestId(`usage-table-${name}`);
  const header = await table.locator("thead th").allTextContents();
  const rows = await table
    .locator("tbody tr")
    .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.getAttribute("data-value") ?? "")));
  // A sort button's arrow is on screen, not in the column's name.
  return [header.map((h) => h.replace(/ ↓$/, "")), ...rows];
}

async function downloadedCsv(page: Page, name: string): Promise<string[][]> {
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId(`usage-csv-${name}`).click()]);
  const file = await download.path();
  return parseCsv(fs.readFileSync(file, "utf8"));
}

async function noSidewaysScroll(page: Page) {
  const [scroll, width] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  expect(scroll, "the page scrolls sideways").toBeLessThanOrEqual(width);
}

test("the page's totals are the engine's to the cent, the CSV has the rows shown, and it is accessible", async ({
  connected: page,
  servers,
  baseURL,
}) => {
  test.setTimeout(180_000);
  const problems = watchForErrors(page);
  const range = thisMonth(Date.now());

  // Known work through Baton's API, as the console's pages do it: a small sandbox busy for ~5 s.
  const created = await page.request.post("/api/v1/sandboxes", {
    data: { template: "python-3.12", metadata: { suite: "usage" } },
    headers: origin(baseURL!),
  });
  expect(created.status(), await created.text()).toBe(201);
  const id = ((await created.json()) as { id: string }).id;
  const busy = await page.request.post(`/api/v1/sandboxes/${id}/exec`, {
    data: { command: "timeout 5 yes > /dev/null; true", timeout_seconds: 30 },
    headers: origin(baseURL!),
  });
  expect(busy.status(), await busy.text()).toBe(200);
  // The terminate takes the final reading.
  const terminated = await page.request.delete(`/api/v1/sandboxes/${id}`, { headers: origin(baseURL!) });
  expect(terminated.ok()).toBe(true);

  // The engine's own figures for the same account and days.
  const engine = await servers.engine.api("GET", `/sandboxes/usage?from=${range.from}&to=${range.to}`);
  expect(engine.status, engine.text).toBe(200);
  const engineEur = engine.body.totals.cost_eur as number;
  expect(engineEur, "the busy loop cost something").toBeGreaterThan(0);
  const engineSandbox = (engine.body.by_sandbox as { id: string; cost_eur: number; cpu_seconds: number }[]).find(
    (s) => s.id === id,
  );
  expect(engineSandbox?.cpu_seconds ?? 0).toBeGreaterThan(1);

  // Baton's record catches up within a few of its readings, and then equals the engine to the cent.
  let report: UsageReport | null = null;
  await expect
    .poll(
      async () => {
        const r = await page.request.get(`/api/usage?from=${range.from}&to=${range.to}`);
        if (!r.ok()) return `status ${r.status()}`;
        report = (await r.json()) as UsageReport;
        return Math.round(report.totals.cost_micro / 10_000);
      },
      { timeout: 30_000 },
    )
    .toBe(Math.round(engineEur * 100));
  const baton = report as unknown as UsageReport;

  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`/usage?from=${range.from}&to=${range.to}`);
  await expect(page.getByRole("heading", { level: 1, name: "Usage" })).toBeVisible();
  const total = page.getByTestId("usage-range-total");
  await expect(total).toHaveAttribute("data-micro", String(baton.totals.cost_micro));
  expect(Math.abs(euros((await total.textContent()) ?? "") - engineEur)).toBeLessThan(0.005 + 1e-9);
  // The URL keeps the team and the range.
  expect(new URL(page.url()).searchParams.get("team")).toBeTruthy();
  expect(new URL(page.url()).searchParams.get("from")).toBe(range.from);

  // The chart is drawn (recharts, loaded on demand) and named; its table view is the equivalent.
  await expect(page.getByTestId("usage-chart")).toHaveAttribute("aria-label", /Cost per day from/);
  await expect(page.getByTestId("usage-chart").locator(".recharts-bar-rectangle").first()).toBeAttached({
    timeout: 15_000,
  });
  await screenshot(page, "usage-chart-light");
  await page.getByRole("group", { name: "View" }).getByRole("button", { name: "Table" }).click();
  for (const grouping of ["member", "template"] as const) {
    await page
      .getByRole("group", { name: "Stack by" })
      .getByRole("button", { name: grouping === "member" ? "By member" : "By template" })
      .click();
    const name = `days-by-${grouping}`;
    const shown = await tableRows(page, name);
    expect(shown.length - 1, "one row per day").toBe(baton.days.length);
    expect(await downloadedCsv(page, name)).toEqual(shown);
    // The days' totals add up to the range's total.
    const sum = shown.slice(1).reduce((s, row) => s + Math.round(Number(row.at(-1)) * 1_000_000), 0);
    expect(sum).toBe(baton.totals.cost_micro);
  }

  // Top sandboxes: linked with the team kept, the sandbox's cost the engine's to the cent, sortable.
  const sandboxes = page.getByTestId("usage-table-sandboxes");
  await expect(sandboxes.getByRole("link", { name: id })).toHaveAttribute("href", teamHref(`/sandboxes/${id}`));
  const row = sandboxes.locator(`tr[data-row="${id}"]`);
  const rowCost = Number(await row.locator("td").last().getAttribute("data-value"));
  expect(Math.abs(rowCost - engineSandbox!.cost_eur)).toBeLessThan(0.005 + 1e-9);
  await sandboxes.getByRole("button", { name: /CPU-seconds/ }).click();
  await expect(sandboxes.locator("th[aria-sort=descending]")).toContainText("CPU-seconds");
  expect(await downloadedCsv(page, "sandboxes")).toEqual(await tableRows(page, "sandboxes"));
  expect(await downloadedCsv(page, "members")).toEqual(await tableRows(page, "members"));

  // The month's figures and the forecast, labelled as a straight line.
  await expect(page.getByTestId("usage-month-so-far")).toHaveAttribute("data-micro", String(baton.month.so_far_micro));
  await expect(page.getByText("Forecast: a straight line from the run-rate")).toBeVisible();
  await expect(page.getByTestId("usage-rates")).toContainText("Prices are an estimate: EUR 0.045 per vCPU-hour");

  // The owner may change the rates: a bad figure is refused in the form, nothing sent.
  await page.getByRole("button", { name: "Change rates" }).click();
  await page.getByLabel("EUR per vCPU-hour").fill("lots");
  await page.getByRole("button", { name: "Save rates" }).click();
  await expect(page.getByText("An amount in EUR, 0 or more")).toBeVisible();
  await page.getByRole("button", { name: "Cancel" }).click();

  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await expect(page.locator("html")).toHaveClass(scheme === "dark" ? /dark/ : /^(?!.*dark)/);
      expect(await seriousAxeViolations(page), `axe at ${width} px (${scheme})`).toEqual([]);
      await noSidewaysScroll(page);
      await screenshot(page, `usage-${width}-${scheme}`);
    }
  }
  await page.emulateMedia({ colorScheme: "light" });
  expect(problems).toEqual([]);
});

test("a range with no usage says so and what counts; a bad range in the URL is named", async ({ connected: page }) => {
  await page.goto("/usage?from=2020-01-01&to=2020-01-31");
  await expect(page.getByText("No usage in these dates")).toBeVisible();
  await expect(page.getByText(/on-CPU seconds and the working-set memory/)).toBeVisible();
  await page.goto("/usage?from=2026-02-30&to=2026-03-01");
  await expect(page.getByText("The dates in the address were not used")).toBeVisible();
  expect(await seriousAxeViolations(page)).toEqual([]);
});

// A sandbox's "Cost so far" (its page and its row in the list) is priced at the team's rate card,
// as /usage is: it once used the seed's prices whatever the card said. Raise the card, and the
// sandbox's figure follows.
test("a sandbox's cost so far follows the team's rate card, on its page and in the list", async ({
  connected: page,
  baseURL,
}) => {
  test.setTimeout(120_000);
  const problems = watchForErrors(page);
  const created = await page.request.post("/api/v1/sandboxes", {
    data: { template: "python-3.12", metadata: { suite: "usage-rates" } },
    headers: origin(baseURL!),
  });
  expect(created.status(), await created.text()).toBe(201);
  const id = ((await created.json()) as { id: string }).id;
  try {
    const busy = await page.request.post(`/api/v1/sandboxes/${id}/exec`, {
      data: { command: "timeout 2 yes > /dev/null; true", timeout_seconds: 30 },
      headers: origin(baseURL!),
    });
    expect(busy.status(), await busy.text()).toBe(200);
    // Paused: the lifetime CPU-seconds hold still while the pages are compared.
    const paused = await page.request.post(`/api/v1/sandboxes/${id}/pause`, { headers: origin(baseURL!) });
    expect(paused.ok(), await paused.text()).toBe(true);
    const metrics = await page.request.get(`/api/v1/sandboxes/${id}/metrics`);
    expect(metrics.ok()).toBe(true);
    const lifetime = ((await metrics.json()) as { lifetime: { cpu_seconds: number; gb_seconds: number } }).lifetime;
    expect(lifetime.cpu_seconds).toBeGreaterThan(0.5);

    await page.goto(`/sandboxes/${id}`);
    const cost = page.getByTestId("cost-so-far");
    await expect(cost).toContainText("€");
    const atSeed = (await cost.textContent()) ?? "";
    await expect(page.getByText("estimate at the team's rate card")).toBeVisible();

    // EUR 3.60 per vCPU-hour (1,000 µ€ a CPU-second), memory free: the cost is the CPU-seconds in mEUR.
    const raised = { vcpu_hour_micro: 3_600_000, gib_hour_micro: 0 };
    const patched = await page.request.patch("/api/usage/rates", { data: raised, headers: origin(baseURL!) });
    expect(patched.status(), await patched.text()).toBe(200);
    const expected = formatEur(computeCostEur(lifetime.cpu_seconds, lifetime.gb_seconds, raised));
    expect(expected).not.toBe(atSeed);
    await page.reload();
    await expect(cost).toContainText(expected);
    await expect(cost).not.toContainText(atSeed);

    await page.goto("/sandboxes");
    const row = page.getByRole("table", { name: "Sandboxes" }).locator(`[role=row][data-sandbox-id="${id}"]`);
    await expect(row.getByRole("cell").last()).toHaveText(expected);
    expect(problems).toEqual([]);
  } finally {
    // Back to the seed's card (the page's first test reads EUR 0.045 per vCPU-hour on a rerun).
    await page.request.patch("/api/usage/rates", {
      data: { vcpu_hour_micro: SEED_RATES.vcpu_hour_micro, gib_hour_micro: SEED_RATES.gib_hour_micro },
      headers: origin(baseURL!),
    });
    await page.request.delete(`/api/v1/sandboxes/${id}`, { headers: origin(baseURL!) });
  }
});
