import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { seriousAxeViolations } from "./a11y";
import { screenshot, watchForErrors } from "./helpers";

// Templates against the real engine and a real `next start`: a build whose step 2 fails (the step
// highlighted with its exit code, the output tail shown, build output escaped), "Edit" prefilled
// from it, a build that succeeds with a live log that stops following when scrolled up, then a
// sandbox from it that sees the file the template installed, and delete with confirmation.
test.use({ consoleInstance: "templates" });
test.describe.configure({ mode: "serial" });

const suffix = Date.now().toString(36);
const sandboxes: string[] = [];

test.afterAll(async ({ servers }) => {
  for (const id of sandboxes) await servers.engine.api("DELETE", `/sandboxes/${id}`);
  const list = await servers.engine.api("GET", "/templates");
  for (const t of (list.body as { id: string; name: string }[]) ?? [])
    if (t.name.endsWith(suffix)) await servers.engine.api("DELETE", `/templates/${t.id}`);
});

/** Fills the create form: CodeMirror must have loaded (the steps editor's own chunk). */
async function fillForm(page: Page, name: string, steps: string[]) {
  await page.getByLabel("Name", { exact: true }).fill(name);
  await expect(page.getByLabel("Base image")).toHaveValue("python-3.12");
  await expect(page.getByTestId("steps-editor")).toHaveAttribute("data-editor", "codemirror");
  const editor = page.getByRole("textbox", { name: "Steps" });
  await editor.click();
  await page.keyboard.insertText(steps.join("\n"));
  await expect(page.getByText(`${steps.length} steps.`)).toBeVisible();
}

test("a failing step 2 is highlighted with its exit code and output tail; build output stays text", async ({
  connected: page,
  localEngine,
}) => {
  void localEngine;
  const problems = watchForErrors(page);
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto("/templates");
  await expect(page.getByRole("heading", { level: 1, name: "Templates" })).toBeVisible();
  await expect(page.getByText("No custom templates yet")).toBeVisible();
  // The built-ins, with what each runs here.
  await expect(page.getByTestId("base-images")).toContainText("python-3.12");
  await expect(page.getByTestId("base-images")).toContainText("Runs:");
  await screenshot(page, "templates-empty-light");
  expect(await seriousAxeViolations(page)).toEqual([]);

  await page.getByRole("link", { name: "Create template" }).first().click();
  await expect(page.getByRole("heading", { level: 1, name: "Create a template" })).toBeVisible();
  const name = `broken-${suffix}`;
  await fillForm(page, name, [
    'echo "step one ok"',
    "printf '\\033[31mred <b>bold</b> <img src=x onerror=alert(1)>\\033[0m\\n' >&2; exit 3",
    "echo never",
  ]);
  // Show code: the same request for the SDKs and curl, no token.
  await page.getByRole("button", { name: "Show code" }).click();
  const code = page.getByTestId("create-code");
  await expect(code).toContainText("Template.create(");
  await expect(code).toContainText(`name=${JSON.stringify(name)}`);
  await page.getByRole("tab", { name: "curl" }).click();
  await expect(code).toContainText("/v1/templates");
  await expect(code).toContainText("$ORKESTR_API_KEY");
  await screenshot(page, "templates-create-light");
  expect(await seriousAxeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: "dark" });
  await screenshot(page, "templates-create-dark");
  expect(await seriousAxeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: "light" });

  await page.getByRole("button", { name: "Create template" }).click();
  await expect(page).toHaveURL(/\/templates\/tmpl_[A-Za-z0-9]+(?:[?&]team=[a-z0-9-]+)?$/);
  const failure = page.getByTestId("build-failure");
  await expect(failure).toContainText("Step 2 of 3 failed with exit code 3", { timeout: 90_000 });
  await expect(page.getByTestId("template-status")).toHaveText("failed");
  // The tail: coloured, and the build's markup shown as text, never as elements.
  const tail = page.getByTestId("failure-tail");
  await expect(tail).toContainText("red <b>bold</b> <img src=x onerror=alert(1)>");
  await expect(tail.locator("span.text-red-700")).toHaveCount(1);
  const log = page.getByTestId("build-log");
  await expect(log.locator("b, img")).toHaveCount(0);
  await expect(tail.locator("b, img")).toHaveCount(0);

  const steps = log.getByTestId("build-step");
  await expect(steps).toHaveCount(2);
  await expect(steps.nth(0)).toHaveAttribute("data-state", "ok");
  await expect(steps.nth(0).locator("[data-stream=stdout]")).toContainText("step one ok");
  await expect(steps.nth(1)).toHaveAttribute("data-state", "failed");
  await expect(steps.nth(1).getByTestId("step-exit")).toContainText("exit code 3");
  await expect(steps.nth(1).locator("[data-stream=stderr]").first()).toContainText("red <b>bold</b>");
  await expect(log.getByTestId("step-waiting")).toContainText("echo never");
  await expect(log.getByTestId("step-waiting")).toContainText("not run");
  await expect(page.getByTestId("log-status")).toContainText("The build has ended");
  // A failed template offers no sandbox.
  await expect(page.getByRole("link", { name: "Create sandbox from this" })).toHaveCount(0);
  await screenshot(page, "templates-failed-light");
  expect(await seriousAxeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: "dark" });
  await screenshot(page, "templates-failed-dark");
  expect(await seriousAxeViolations(page)).toEqual([]);

  // Edit: a new template prefilled from this one (templates are immutable).
  await failure.getByRole("link", { name: "Edit as new template" }).click();
  await expect(page).toHaveURL(/\/templates\/new\?from=tmpl_/);
  await expect(page.getByLabel("Name", { exact: true })).toHaveValue(`broken-${suffix}-2`);
  await expect(page.getByTestId("steps-editor")).toContainText("exit 3");
  await expect(page.getByText("3 steps.")).toBeVisible();
  expect(problems).toEqual([]);
});

test("a build that succeeds streams its log, then a sandbox from it sees the installed file; delete confirms", async ({
  connected: page,
  servers,
}) => {
  const problems = watchForErrors(page);
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto("/templates/new");
  const name = `marker-${suffix}`;
  await fillForm(page, name, [
    "mkdir -p /opt/baton && echo template-ok > /opt/baton/marker",
    // A pause mid-step: the page must show the step running with its first line before it ends.
    "echo started; sleep 8; for i in $(seq 1 120); do echo \"line $i\"; done; printf '\\033[1;32mdone\\033[0m\\n'",
  ]);
  await page.getByRole("button", { name: "Create template" }).click();
  await expect(page).toHaveURL(/\/templates\/tmpl_[A-Za-z0-9]+(?:[?&]team=[a-z0-9-]+)?$/);
  const templateId = new URL(page.url()).pathname.split("/").pop()!;
  const log = page.getByTestId("build-log");
  // Live: the running step and its first line appear while the build still runs.
  const running = log.locator("[data-testid=build-step][data-state=running]");
  await expect(running).toContainText("started", { timeout: 60_000 });
  await expect(running).not.toContainText("line 1");
  await expect(page.getByTestId("log-status")).toContainText("Live");
  await expect(page.getByTestId("template-status")).toHaveText("building");
  await screenshot(page, "templates-building-light");
  await expect(page.getByTestId("template-status")).toHaveText("ready", { timeout: 90_000 });
  await expect(log.getByTestId("build-step")).toHaveCount(2);
  await expect(log.getByTestId("build-step").nth(1)).toHaveAttribute("data-state", "ok");
  await expect(log).toContainText("line 120");
  await expect(log.locator("span.text-green-700", { hasText: "done" })).toHaveCount(1);
  await expect(page.getByTestId("build-failure")).toHaveCount(0);

  // Following: scrolled to the end; scrolling up stops it, "Jump to latest" resumes it.
  await expect(log).toHaveAttribute("data-following", "true");
  await expect.poll(() => log.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight)).toBeLessThan(30);
  await log.evaluate((el) => el.scrollTo({ top: 0 }));
  await expect(log).toHaveAttribute("data-following", "false");
  await page.getByRole("button", { name: /Jump to latest/ }).click();
  await expect(log).toHaveAttribute("data-following", "true");
  await expect.poll(() => log.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight)).toBeLessThan(30);

  await page.getByText("Create a sandbox from this template").click();
  await expect(page.getByTestId("code-sandbox")).toContainText(`template=${JSON.stringify(templateId)}`);
  await screenshot(page, "templates-ready-light");
  expect(await seriousAxeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: "dark" });
  await screenshot(page, "templates-ready-dark");
  expect(await seriousAxeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: "light" });

  // "Create sandbox from this": the create form with the template chosen.
  await page.getByRole("link", { name: "Create sandbox from this" }).click();
  await expect(page).toHaveURL(new RegExp(`/sandboxes/new\\?template=${templateId}(?:[?&]team=[a-z0-9-]+)?$`));
  await expect(page.getByLabel("Template", { exact: true })).toHaveValue(templateId);
  await page.getByRole("button", { name: "Create sandbox" }).click();
  await expect(page).toHaveURL(/\/sandboxes\/(sbx_[A-Za-z0-9]+)(?:[?&]team=[a-z0-9-]+)?$/, { timeout: 30_000 });
  const sandboxId = new URL(page.url()).pathname.split("/").pop()!;
  sandboxes.push(sandboxId);
  const r = await servers.engine.api("POST", `/sandboxes/${sandboxId}/exec`, { command: "cat /opt/baton/marker" });
  expect(r.status, r.text).toBe(200);
  expect(r.body.stdout).toBe("template-ok\n");

  // The list shows the template with the sandbox using it; its page too.
  await page.goto("/templates");
  const row = page.locator(`[data-testid=template-row][data-name="${name}"]`);
  await expect(row).toContainText("ready");
  await expect(row.getByRole("link", { name: sandboxId })).toBeVisible();
  await screenshot(page, "templates-list-light");
  expect(await seriousAxeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: "dark" });
  await screenshot(page, "templates-list-dark");
  expect(await seriousAxeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: "light" });

  await row.getByRole("link", { name }).click();
  await expect(page.getByTestId("template-users").getByRole("link", { name: sandboxId })).toBeVisible();
  // Delete: the dialog names the sandbox still running it; cancel changes nothing, confirm deletes.
  await page.getByRole("button", { name: "Delete", exact: true }).click();
  const dialog = page.getByRole("dialog", { name: "Delete this template?" });
  await expect(dialog.getByTestId("delete-in-use")).toContainText("1 live sandbox runs");
  expect(await seriousAxeViolations(page)).toEqual([]);
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await expect(dialog).toBeHidden();
  await page.getByRole("button", { name: "Delete", exact: true }).click();
  await dialog.getByRole("button", { name: "Delete template" }).click();
  await expect(page).toHaveURL(/\/templates(?:[?&]team=[a-z0-9-]+)?$/);
  await expect(page.locator(`[data-testid=template-row][data-name="${name}"]`)).toHaveCount(0);
  expect((await servers.engine.api("GET", `/templates/${templateId}`)).status).toBe(404);
  // The sandbox keeps running on it.
  expect(
    (await servers.engine.api("POST", `/sandboxes/${sandboxId}/exec`, { command: "cat /opt/baton/marker" })).body
      .stdout,
  ).toBe("template-ok\n");
  expect(problems).toEqual([]);
});
