import type { Page } from "@playwright/test";
import { seriousAxeViolations } from "./a11y";
import { expect, test } from "./fixtures";
import { screenshot, watchForErrors, teamHref } from "./helpers";

// The detail page against a real sandbox of the real engine: overview fields, live charts (a busy
// loop makes CPU rise; a pause shows as a gap), the activity timeline, lifecycle buttons.
test.use({ consoleInstance: "sandbox-detail" });

/** The "CPU now" figure as a number (NaN while it shows "—"). */
async function cpuNow(page: Page): Promise<number> {
  const text = (await page.getByTestId("cpu-now").textContent()) ?? "";
  return Number.parseFloat(text);
}

test("overview, live CPU chart, pause gap, resume, timeline, metadata, keep-alive and terminate", async ({
  connected: page,
  servers,
}) => {
  test.setTimeout(180_000);
  const problems = watchForErrors(page);
  const created = await servers.engine.api<{ id: string }>("POST", "/sandboxes", {
    template: "python-3.12",
    env: { GREETING: "hello" },
    metadata: { suite: "detail" },
    timeout_seconds: 900,
  });
  expect(created.status).toBe(201);
  const id = created.body.id;

  await page.emulateMedia({ colorScheme: "light" });
  await page.goto(`/sandboxes/${id}`);
  await expect(page.getByRole("heading", { level: 1, name: id })).toBeVisible();
  await expect(page.getByTestId("sandbox-status")).toHaveText("running");
  await expect(
    page.getByRole("navigation", { name: "Sandbox sections" }).getByRole("link", { name: "Overview" }),
  ).toHaveAttribute("aria-current", "page");
  for (const tab of ["Terminal", "Files", "Previews", "Activity"]) {
    await expect(
      page.getByRole("navigation", { name: "Sandbox sections" }).getByRole("link", { name: tab }),
    ).toHaveAttribute("href", teamHref(`/sandboxes/${id}/${tab.toLowerCase()}`));
  }
  // Every field.
  await expect(page.getByTestId("field-template")).toContainText("python-3.12");
  await expect(page.getByTestId("field-size")).toContainText("small");
  await expect(page.getByTestId("field-region")).toHaveText("fsn1");
  await expect(page.getByTestId("field-network")).toContainText("off");
  await expect(page.getByTestId("field-timeout")).toContainText("15m");
  await expect(page.getByTestId("env-keys")).toHaveText("GREETING");
  await expect(page.getByRole("list", { name: "Metadata" })).toContainText("suite=detail");
  await expect(page.getByTestId("expiry-countdown")).toContainText(/terminates in 1[45]m/);

  // CPU rises while a busy loop runs (started through the engine API: the terminal is another tab's job).
  await expect(page.getByTestId("cpu-chart").locator(".recharts-area-curve")).toBeAttached({ timeout: 15_000 });
  const before = await cpuNow(page);
  expect(before).toBeLessThan(20);
  // A busy loop takes a core, but this 2-core machine is shared with other builds: "rises" is
  // measured against the idle figure, not against 100 %.
  const busyFloor = Math.max(30, before + 20);
  const busy = await servers.engine.api("POST", `/sandboxes/${id}/exec`, {
    command: "(timeout 60 yes > /dev/null 2>&1 &)",
  });
  expect(busy.status).toBe(200);
  await expect.poll(() => cpuNow(page), { timeout: 20_000 }).toBeGreaterThan(busyFloor);
  await expect(page.getByTestId("cost-so-far")).toContainText("€");
  await page.waitForTimeout(3_000); // a few seconds of the plateau on the chart
  await screenshot(page, "sandbox-detail-light");
  expect(await seriousAxeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: "dark" });
  await expect(page.locator("html")).toHaveClass(/(^|\s)dark(\s|$)/);
  await screenshot(page, "sandbox-detail-dark");
  expect(await seriousAxeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: "light" });

  // Pause: the status, the charts' honest gap (a shaded "paused" period, no samples), no live figures.
  await page.getByRole("button", { name: "Pause", exact: true }).click();
  await expect(page.getByTestId("sandbox-status")).toHaveText("paused");
  await expect(page.getByText(`Paused ${id}`)).toBeVisible();
  await expect(page.getByTestId("metrics-not-running")).toContainText("No live usage while the sandbox is paused");
  await expect(page.getByTestId("cpu-now")).toHaveText("—");
  await expect(page.getByTestId("cpu-chart").locator(".recharts-reference-area")).toHaveCount(1);
  await expect(page.getByTestId("cpu-chart").getByText("paused")).toBeVisible();
  await page.waitForTimeout(4_000);
  await screenshot(page, "sandbox-detail-paused");
  expect((await servers.engine.api("GET", `/sandboxes/${id}`)).body.status).toBe("paused");

  // Resume: live again, the busy loop still spinning.
  await page.getByRole("button", { name: "Resume" }).click();
  await expect(page.getByTestId("sandbox-status")).toHaveText("running");
  await expect(page.getByText(`Resumed ${id}`)).toBeVisible();
  await expect.poll(() => cpuNow(page), { timeout: 20_000 }).toBeGreaterThan(busyFloor);
  await screenshot(page, "sandbox-detail-resumed");

  // Metadata: edit and save (PATCH), then what the engine holds.
  await page.getByRole("button", { name: "Edit metadata" }).click();
  await page.getByLabel("Label 1 value").fill("detail-edited");
  await page.getByRole("button", { name: "Add label" }).click();
  await page.getByLabel("Label 2 name").fill("owner");
  await page.getByLabel("Label 2 value").fill("ada");
  await page.getByRole("button", { name: "Save metadata" }).click();
  await expect(page.getByText("Metadata saved")).toBeVisible();
  await expect(page.getByRole("list", { name: "Metadata" })).toContainText("owner=ada");
  expect((await servers.engine.api("GET", `/sandboxes/${id}`)).body.metadata).toEqual({
    suite: "detail-edited",
    owner: "ada",
  });

  // Keep alive: the countdown restarts.
  await page.getByRole("button", { name: "Keep alive…" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "1h" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Restart the countdown" }).click();
  await expect(page.getByTestId("expiry-countdown")).toContainText(/terminates in (59m|1h)/);
  // The success toast, checked while it is up: sonner's own light-theme green failed contrast.
  await expect(page.getByText("The countdown restarts: 3600 s from now")).toBeVisible();
  expect(await seriousAxeViolations(page)).toEqual([]);

  // The timeline: lifecycle and exec events, newest first, and live (a new command appears by itself).
  await page.getByRole("navigation", { name: "Sandbox sections" }).getByRole("link", { name: "Activity" }).click();
  await expect(page).toHaveURL(new RegExp(`/sandboxes/${id}/activity(?:[?&]team=[a-z0-9-]+)?$`));
  const timeline = page.getByTestId("timeline");
  await expect(page.getByTestId("timeline-mode")).toContainText("Live");
  await expect(timeline.locator('[data-event-type="sandbox.created"]')).toBeVisible();
  await expect(timeline.locator('[data-event-type="exec"]').first()).toContainText("yes > /dev/null");
  await expect(timeline.locator('[data-event-type="sandbox.paused"]')).toBeVisible();
  await expect(timeline.locator('[data-event-type="sandbox.resumed"]')).toBeVisible();
  await servers.engine.api("POST", `/sandboxes/${id}/exec`, { command: "echo from-the-api" });
  await expect(timeline.locator("li").first()).toContainText("echo from-the-api");
  await servers.engine.api("POST", `/sandboxes/${id}/files`, {
    path: "/workspace/note.txt",
    content: Buffer.from("hi").toString("base64"),
    encoding: "base64",
  });
  await expect(timeline.locator("li").first()).toContainText("Wrote /workspace/note.txt");
  await page.getByRole("button", { name: "Commands" }).click();
  await expect(timeline.locator('[data-event-type="sandbox.created"]')).toHaveCount(0);
  await page.getByRole("button", { name: "All" }).click();
  await screenshot(page, "sandbox-activity-light");
  expect(await seriousAxeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: "dark" });
  await screenshot(page, "sandbox-activity-dark");
  expect(await seriousAxeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: "light" });

  // Terminate asks first; Cancel keeps the sandbox.
  await page.getByRole("button", { name: "Terminate…" }).click();
  const dialog = page.getByRole("dialog", { name: `Terminate ${id}?` });
  await expect(dialog).toBeVisible();
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await expect(dialog).toBeHidden();
  expect((await servers.engine.api("GET", `/sandboxes/${id}`)).body.status).toBe("running");
  await page.getByRole("button", { name: "Terminate…" }).click();
  await dialog.getByRole("button", { name: "Terminate sandbox" }).click();
  await expect(page.getByTestId("sandbox-status")).toHaveText("terminated");
  await expect(page.getByText(`Terminated ${id}`)).toBeVisible();
  await expect(timeline.locator('[data-event-type="sandbox.terminated"]')).toBeVisible();
  expect((await servers.engine.api("GET", `/sandboxes/${id}`)).body.status).toBe("terminated");
  await expect(page.getByRole("button", { name: "Pause", exact: true })).toHaveCount(0);
  expect(problems).toEqual([]);
});

test("an unknown sandbox id is a 404 page inside the console", async ({ connected: page }) => {
  // The console's loading.tsx streams the shell first, so the status line is already 200 when the
  // layout finds no sandbox: Next then renders the not-found page into the stream (with noindex).
  await page.goto("/sandboxes/sbx_DOESNOTEXIST0000000000000");
  await expect(page.getByRole("heading", { level: 1, name: "Sandbox not found" })).toBeVisible();
  await expect(page.getByRole("link", { name: "All sandboxes" })).toBeVisible();
  await expect(page.locator('meta[name="robots"]').first()).toHaveAttribute("content", /noindex/);
});

test("on a phone, a chart below the fold loads when scrolled to, not with the page", async ({
  connected: page,
  servers,
}) => {
  const created = await servers.engine.api<{ id: string }>("POST", "/sandboxes", {
    template: "python-3.12",
    timeout_seconds: 600,
  });
  expect(created.status).toBe(201);
  const id = created.body.id;
  try {
    // Short enough that the charts start below the fold whatever the header holds.
    await page.setViewportSize({ width: 412, height: 600 });
    await page.goto(`/sandboxes/${id}`);
    const cpuChart = page.getByTestId("cpu-chart");
    // Samples are in (the figures show them), and the page has had time to go idle...
    await expect(page.getByTestId("memory-now")).not.toHaveText("—");
    await page.waitForTimeout(2_000);
    // ...but the chart code (the page's heaviest) has not run: the placeholder holds its place.
    await expect(page.locator(".recharts-surface")).toHaveCount(0);
    await expect(cpuChart.locator(".animate-pulse")).toBeAttached();
    await cpuChart.scrollIntoViewIfNeeded();
    await expect(cpuChart.locator(".recharts-area-curve")).toBeAttached({ timeout: 15_000 });
  } finally {
    await servers.engine.api("DELETE", `/sandboxes/${id}`);
  }
});
