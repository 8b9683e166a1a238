import path from "node:path";
import type { Locator, Page, TestInfo } from "@playwright/test";
import { expect, SCREENS_DIR, test } from "./fixtures";
import { screenshot, watchForErrors } from "./helpers";

// Issue 6's end-to-end story, one sandbox through every page, in the real console against the real
// engine: create → list → metadata filter → terminal → CPU chart → files → preview → pause →
// resume → terminate. Each page is captured light and dark and attached to the test report.
// A short instance name: the engine's preview relay sockets live under the console's temp dir.
test.use({ consoleInstance: "story" });

const SANDBOX_ID = /\/sandboxes\/(sbx_[A-Za-z0-9]+)(?:\?team=[a-z0-9-]+)?$/;

/** Light and dark screenshots of the page as it is, attached to the report. */
async function capture(page: Page, info: TestInfo, name: string): Promise<void> {
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await expect(page.locator("html")).toHaveClass(scheme === "dark" ? /(^|\s)dark(\s|$)/ : /^(?!.*\bdark\b)/);
    await screenshot(page, `story-${name}-${scheme}`);
    await info.attach(`${name} (${scheme})`, {
      path: path.join(SCREENS_DIR, `story-${name}-${scheme}.png`),
      contentType: "image/png",
    });
  }
  await page.emulateMedia({ colorScheme: "light" });
}

const section = (page: Page, name: string): Locator =>
  page.getByRole("navigation", { name: "Sandbox sections" }).getByRole("link", { name });
const terminal = (page: Page): Locator => page.locator('[role="tabpanel"]:not([hidden]) [data-testid="terminal"]');
const screenText = (page: Page): Promise<string> => terminal(page).locator(".xterm-rows").innerText();

async function run(page: Page, line: string): Promise<void> {
  await terminal(page).click();
  await page.keyboard.type(line);
  await page.keyboard.press("Enter");
}

async function cpuNow(page: Page): Promise<number> {
  return Number.parseFloat((await page.getByTestId("cpu-now").textContent()) ?? "");
}

test("one sandbox through every page of the console", async ({ connected: page, servers }, info) => {
  test.setTimeout(300_000);
  const problems = watchForErrors(page);
  const run_ = `story-${Date.now()}`;

  // Create, with env and metadata, and a network so the preview can be reached.
  await page.goto("/sandboxes/new");
  await expect(page.getByLabel("Template", { exact: true })).toHaveValue("python-3.12");
  await page.getByRole("radio", { name: /Restricted/ }).check();
  await page.getByLabel("Variable 1 name").fill("STORY_SECRET");
  await page.getByLabel("Variable 1 value").fill("kept-in-the-sandbox");
  await page.getByLabel("Label 1 name").fill("story");
  await page.getByLabel("Label 1 value").fill(run_);
  await page.getByLabel("Timeout (seconds)").fill("1800");
  await capture(page, info, "create");
  await page.getByRole("button", { name: "Create sandbox" }).click();
  await expect(page).toHaveURL(SANDBOX_ID, { timeout: 30_000 });
  const id = SANDBOX_ID.exec(new URL(page.url()).pathname)![1]!;

  // It appears in the list, and the metadata filter finds it (and only sandboxes of this run).
  await page.goto("/sandboxes");
  const rowOf = page.locator(`[role=row][data-sandbox-id="${id}"]`);
  await expect(rowOf).toBeVisible();
  await page.getByRole("textbox", { name: "Metadata" }).fill(`story=${run_}`);
  await page.getByRole("button", { name: "Add filter" }).click();
  await expect(page).toHaveURL(/metadata(%5B|\[)story(%5D|\])=/);
  await expect(rowOf).toBeVisible();
  await expect(page.locator("[role=row][data-sandbox-id]")).toHaveCount(1);
  await capture(page, info, "list");

  // The terminal computes.
  await page.goto(`/sandboxes/${id}/terminal`);
  await page.getByRole("button", { name: /^(Open|New) terminal$/ }).click();
  await expect(terminal(page)).toHaveAttribute("data-status", "ready", { timeout: 20_000 });
  await run(page, 'python3 -c "print(sum(range(1_000_000)))"');
  await expect.poll(() => screenText(page), { timeout: 15_000 }).toContain("499999500000");
  await capture(page, info, "terminal");

  // The CPU chart rises while `yes > /dev/null` runs (started in the terminal, in the background).
  await run(page, "(timeout 90 yes > /dev/null &)");
  await section(page, "Overview").click();
  await expect(page.getByTestId("cpu-chart").locator(".recharts-area-curve")).toBeAttached({ timeout: 15_000 });
  // The 2-core machine is shared with the test runner: "rises" means well above idle, not 100 %.
  await expect.poll(() => cpuNow(page), { timeout: 30_000 }).toBeGreaterThan(30);
  await capture(page, info, "overview");

  // A file written in the file browser is read back in the terminal.
  await section(page, "Files").click();
  await page.getByRole("button", { name: "New file" }).click();
  const fileDialog = page.getByRole("dialog", { name: "New file" });
  await fileDialog.getByLabel("File name").fill("story.txt");
  await fileDialog.getByRole("button", { name: "Create file" }).click();
  await page.getByRole("textbox", { name: "Edit story.txt" }).fill(`written in the browser ${run_}\n`);
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await expect(page.getByText("Saved /workspace/story.txt")).toBeVisible();
  await capture(page, info, "files");
  await section(page, "Terminal").click();
  await page.getByRole("button", { name: /^(Open|New) terminal$/ }).click();
  await expect(terminal(page)).toHaveAttribute("data-status", "ready", { timeout: 20_000 });
  await run(page, "cat /workspace/story.txt");
  await expect.poll(() => screenText(page), { timeout: 15_000 }).toContain(`written in the browser ${run_}`);

  // A server started in the terminal shows its listing inside the preview iframe.
  await run(page, "cd /workspace && nohup python3 -m http.server 8000 >/dev/null 2>&1 &");
  await section(page, "Previews").click();
  await page.getByLabel("Port", { exact: true }).fill("8000");
  await page.getByRole("button", { name: "Preview", exact: true }).click();
  const frame = page.frameLocator("iframe[title='Preview of port 8000']");
  await expect(frame.getByRole("heading", { name: "Directory listing for /" })).toBeVisible({ timeout: 30_000 });
  await expect(frame.getByRole("link", { name: "story.txt" })).toBeVisible();
  // The port list catches up with the port just previewed (a scan runs when it was not listed).
  await expect(page.getByRole("list", { name: "Detected ports" })).toContainText("8000", { timeout: 15_000 });
  await capture(page, info, "previews");

  // Pause (the chart shows it), resume, terminate.
  await section(page, "Overview").click();
  await page.getByRole("button", { name: "Pause", exact: true }).click();
  await expect(page.getByTestId("sandbox-status")).toHaveText("paused");
  await expect(page.getByTestId("cpu-chart").getByText("paused")).toBeVisible({ timeout: 15_000 });
  await capture(page, info, "paused");
  await page.getByRole("button", { name: "Resume" }).click();
  await expect(page.getByTestId("sandbox-status")).toHaveText("running");
  await page.getByRole("button", { name: "Terminate…" }).click();
  await page
    .getByRole("dialog", { name: `Terminate ${id}?` })
    .getByRole("button", { name: "Terminate sandbox" })
    .click();
  await expect(page.getByTestId("sandbox-status")).toHaveText("terminated");
  await section(page, "Activity").click();
  await expect(page.getByTestId("timeline").locator('[data-event-type="sandbox.terminated"]')).toBeVisible();
  await capture(page, info, "activity");
  expect((await servers.engine.api("GET", `/sandboxes/${id}`)).body.status).toBe("terminated");
  expect(problems).toEqual([]);
});
