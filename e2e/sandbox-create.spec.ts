import type { Page } from "@playwright/test";
import { seriousAxeViolations } from "./a11y";
import { injectFault } from "../engine/test/helpers/engine";
import { expect, test } from "./fixtures";
import { screenshot, watchForErrors } from "./helpers";

// The create page against the real engine: the form's options come from the engine's limits,
// base images, templates, volumes and snapshots; creates go through Baton's proxy.
test.use({ consoleInstance: "sandbox-create" });

const SANDBOX_ID = /\/sandboxes\/(sbx_[A-Za-z0-9]+)(?:\?team=[a-z0-9-]+)?$/;

async function openForm(page: Page) {
  await page.goto("/sandboxes/new");
  await expect(page.getByRole("heading", { level: 1, name: "Create a sandbox" })).toBeVisible();
  // The form renders once the plan's limits arrived; the template list once the images did.
  await expect(page.getByRole("button", { name: "Create sandbox" })).toBeVisible();
  await expect(page.getByLabel("Template", { exact: true })).toHaveValue("python-3.12");
}

test("creates a sandbox with env, metadata and a restricted network through the form, then lands on its page", async ({
  connected: page,
  servers,
}) => {
  const problems = watchForErrors(page);
  await page.emulateMedia({ colorScheme: "light" });
  await openForm(page);

  // The size menu and the regions come from the engine's limits.
  await expect(page.getByRole("radio", { name: /small/i })).toBeChecked();
  await expect(page.getByLabel("Region")).toContainText("fsn1");

  await page.getByRole("radio", { name: /Restricted/ }).check();
  // The allowlist editor starts with the engine's default_egress_domains.
  const allowed = page.getByRole("list", { name: "Allowed domains" });
  await expect(allowed).toContainText("pypi.org");
  await page.getByLabel("Add a domain").fill("api.internal.example.com");
  await page.getByRole("button", { name: "Add domain" }).click();
  await expect(allowed).toContainText("api.internal.example.com");

  const secret = `s3cr3t-${Date.now()}`;
  await page.getByLabel("Variable 1 name").fill("SECRET_TOKEN");
  const value = page.getByLabel("Variable 1 value");
  await value.fill(secret);
  await expect(value).toHaveAttribute("type", "password"); // masked
  const run = `e2e-${Date.now()}`;
  await page.getByLabel("Label 1 name").fill("agent_run");
  await page.getByLabel("Label 1 value").fill(run);
  await page.getByLabel("Timeout (seconds)").fill("900");

  // Show code: the same request in three languages, never a token nor the env value.
  await page.getByRole("button", { name: "Show code" }).click();
  const code = page.getByTestId("request-code");
  for (const [tab, expected] of [
    [
      "Python",
      [
        "from orkestr import Sandbox",
        'network="restricted"',
        "api.internal.example.com",
        'os.environ["SECRET_TOKEN"]',
        `"agent_run": "${run}"`,
        "timeout_seconds=900",
      ],
    ],
    [
      "JavaScript",
      ['import { Sandbox } from "orkestr"', "allowDomains:", "timeoutSeconds: 900", 'process.env["SECRET_TOKEN"]'],
    ],
    [
      "curl",
      [
        "/v1/sandboxes",
        "Authorization: Bearer $ORKESTR_API_KEY",
        "Idempotency-Key",
        '"SECRET_TOKEN": "${SECRET_TOKEN}"',
      ],
    ],
  ] as const) {
    await page.getByRole("tab", { name: tab }).click();
    for (const fragment of expected) await expect(code).toContainText(fragment);
    const text = (await code.textContent()) ?? "";
    expect(text).not.toContain(secret);
    expect(text).not.toMatch(/ork_[A-Za-z0-9]/);
    expect(text).not.toContain(servers.engine.token);
  }
  await screenshot(page, "sandbox-create-light");
  expect(await seriousAxeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: "dark" });
  await expect(page.locator("html")).toHaveClass(/(^|\s)dark(\s|$)/);
  await screenshot(page, "sandbox-create-dark");
  expect(await seriousAxeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: "light" });

  // One create, with an Idempotency-Key.
  const createRequest = page.waitForRequest(
    (r) => r.method() === "POST" && new URL(r.url()).pathname === "/api/v1/sandboxes",
  );
  await page.getByRole("button", { name: "Create sandbox" }).click();
  expect((await createRequest).headers()["idempotency-key"]).toMatch(/^[0-9a-f-]{32,36}$/);
  await expect(page).toHaveURL(SANDBOX_ID, { timeout: 30_000 });
  const id = SANDBOX_ID.exec(new URL(page.url()).pathname)![1]!;
  await expect(page.getByText(`Sandbox ${id} created`)).toBeVisible();
  await expect(page.getByRole("heading", { level: 1, name: id })).toBeVisible();
  await expect(page.getByTestId("field-network")).toContainText("restricted");
  await expect(page.getByTestId("env-keys")).toContainText("SECRET_TOKEN");
  await expect(page.getByRole("list", { name: "Metadata" })).toContainText(`agent_run=${run}`);

  // What the engine got: the whole request, the env value inside the sandbox only.
  const sandbox = await servers.engine.api("GET", `/sandboxes/${id}`);
  expect(sandbox.body).toMatchObject({
    network: "restricted",
    metadata: { agent_run: run },
    env_keys: ["SECRET_TOKEN"],
    timeout_seconds: 900,
  });
  expect(sandbox.body.allow_domains).toContain("api.internal.example.com");
  const echoed = await servers.engine.api("POST", `/sandboxes/${id}/exec`, { command: 'printf %s "$SECRET_TOKEN"' });
  expect(echoed.body.stdout).toBe(secret);
  await servers.engine.api("DELETE", `/sandboxes/${id}`);
  expect(problems).toEqual([]);
});

test("shows inline errors next to the fields and sends nothing until they are fixed", async ({ connected: page }) => {
  await openForm(page);
  let posts = 0;
  page.on("request", (r) => {
    if (r.method() === "POST" && new URL(r.url()).pathname === "/api/v1/sandboxes") posts++;
  });
  await page.getByLabel("Timeout (seconds)").fill("5");
  await page.getByLabel("Variable 1 name").fill("1BAD");
  await page.getByLabel("Variable 1 value").fill("x");
  await page.getByLabel("Label 1 name").fill("team");
  await page.getByLabel("Label 1 value").fill("a");
  await page.getByRole("button", { name: "Add label" }).click();
  await page.getByLabel("Label 2 name").fill("team");
  await page.getByRole("radio", { name: /A new volume/ }).check();
  await page.getByLabel("New volume name", { exact: true }).fill("-bad name");
  await page.getByRole("button", { name: "Create sandbox" }).click();

  await expect(page.getByText("At least 10 seconds.")).toBeVisible();
  await expect(page.getByLabel("Timeout (seconds)")).toHaveAttribute("aria-invalid", "true");
  await expect(page.getByText("Names are letters, digits and _, and do not start with a digit.")).toBeVisible();
  await expect(page.getByText('"team" is already set above.')).toBeVisible();
  await expect(page.getByText(/Letters, digits, '\.', '_' and '-', starting with/)).toBeVisible();
  await expect(page.getByRole("alert").filter({ hasText: "Some fields need attention" })).toBeVisible();
  // Keyboard users land on the first field in error.
  await expect(page.getByLabel("Timeout (seconds)")).toBeFocused();

  // Fixing a field clears its message as you type.
  await page.getByLabel("Timeout (seconds)").fill("60");
  await expect(page.getByText("At least 10 seconds.")).toHaveCount(0);
  await screenshot(page, "sandbox-create-errors");
  expect(posts).toBe(0);
});

test("explains a full fleet in plain words and retries on its own when Retry-After has passed", async ({
  connected: page,
  servers,
}) => {
  const problems = watchForErrors(page, {
    allowStatus: (status, url) => status === 503 && new URL(url).pathname === "/api/v1/sandboxes",
  });
  // The engine answers the next create with 503 fleet_full and Retry-After: 4 (one request only).
  await injectFault(servers.engine, {
    kind: "fleet_full",
    path: "^/v1/sandboxes$",
    method: "POST",
    retry_after_seconds: 4,
    count: 1,
  });

  await openForm(page);
  const keys: string[] = [];
  page.on("request", (r) => {
    if (r.method() === "POST" && new URL(r.url()).pathname === "/api/v1/sandboxes")
      keys.push(r.headers()["idempotency-key"] ?? "");
  });
  await page.getByRole("button", { name: "Create sandbox" }).click();
  const alert = page.getByTestId("create-error");
  await expect(alert).toContainText("The fleet is full right now");
  await expect(alert).toContainText("nothing was created");
  await expect(alert).toContainText("fleet_full");
  // The countdown is live: it starts at the Retry-After and goes down.
  const timer = page.getByRole("timer");
  await expect(timer).toHaveText(/Retrying in [34] s/);
  await screenshot(page, "sandbox-create-fleet-full");
  await expect(timer).toHaveText(/Retrying in [12] s/);
  // Then the retry succeeds and the page moves on.
  await expect(page).toHaveURL(SANDBOX_ID, { timeout: 20_000 });
  expect(keys).toHaveLength(2);
  // A definitive refusal (nothing created) gets a fresh key for the next attempt.
  expect(keys[0]).not.toBe(keys[1]);
  const id = SANDBOX_ID.exec(new URL(page.url()).pathname)![1]!;
  await servers.engine.api("DELETE", `/sandboxes/${id}`);
  expect(problems).toEqual([]);
});

test("disables volumes that are in use, saying which sandbox holds them", async ({ connected: page, servers }) => {
  const volume = `held-${Date.now()}`;
  const holder = await servers.engine.api<{ id: string }>("POST", "/sandboxes", { template: "python-3.12", volume });
  expect(holder.status).toBe(201);
  await openForm(page);
  await page.getByRole("radio", { name: /An existing volume/ }).check();
  const option = page.getByLabel("Which volume").locator("option", { hasText: volume });
  await expect(option).toBeDisabled();
  await expect(option).toContainText(`In use by ${holder.body.id}`);
  await servers.engine.api("DELETE", `/sandboxes/${holder.body.id}`);
});
