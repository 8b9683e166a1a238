import type { Page } from "@playwright/test";
import { clearFaults, injectFault } from "../engine/test/helpers/engine";
import { expect, test, type Servers } from "./fixtures";
import { screenshot } from "./helpers";

// Faults from the engine's fault switch (/_admin/faults) against the real console: a burst of 5xx,
// 503 fleet_full with Retry-After, 5 s of latency and connection resets. Each page says what
// happened and what Baton does next (a countdown to the retry), keeps what is on screen and what
// was typed, and recovers by itself: no reload (a marker on `window` survives only without one).
test.use({ consoleInstance: "faults" });

const SANDBOX_ID = /\/sandboxes\/(sbx_[A-Za-z0-9]+)(?:\?team=[a-z0-9-]+)?$/;

test.afterEach(async ({ servers }) => {
  await clearFaults(servers.engine);
});

async function markPage(page: Page) {
  await page.evaluate(() => ((window as unknown as { __noReload: boolean }).__noReload = true));
}

async function notReloaded(page: Page) {
  expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
}

async function newSandbox(servers: Servers) {
  const created = await servers.engine.api<{ id: string }>("POST", "/sandboxes", { template: "python-3.12" });
  expect(created.status).toBe(201);
  return created.body.id;
}

/** Light, then dark: the notices must read well in both. */
async function shots(page: Page, name: string) {
  await page.emulateMedia({ colorScheme: "light" });
  await screenshot(page, `${name}-light`);
  await page.emulateMedia({ colorScheme: "dark" });
  await screenshot(page, `${name}-dark`);
  await page.emulateMedia({ colorScheme: "light" });
}

test("the sandbox list says a burst of 5xx is being retried, counts down, keeps its rows and recovers without a reload", async ({
  connected: page,
  servers,
}) => {
  const id = await newSandbox(servers);
  await page.goto("/sandboxes");
  const row = page.getByRole("link", { name: id });
  await expect(row).toBeVisible();
  await markPage(page);

  // The next three list reads fail with 500: more than the old policy's two retries.
  await injectFault(servers.engine, { kind: "error", status: 500, path: "^/v1/sandboxes$", method: "GET", count: 3 });
  await page.getByRole("button", { name: "Refresh now" }).click();

  const notice = page.getByTestId("retry-notice");
  await expect(notice).toContainText("The list is not refreshing");
  // What happened, in Baton's words (the engine's own text stays in the log)...
  await expect(notice).toContainText("The orkestr API had an internal error (500)");
  // ...what is on screen meanwhile, and what Baton does next.
  await expect(notice).toContainText("The rows below are from the last successful refresh");
  await expect(notice.getByRole("timer")).toHaveText(/Retrying in \d+ s \(attempt [2-4]\)|Retrying now/);
  await expect(row).toBeVisible();
  // The console-wide banner names it too, with when it started.
  await expect(page.getByTestId("outage-banner")).toContainText(/could not be loaded since \d\d:\d\d:\d\d/);
  await shots(page, "faults-list-5xx");

  await expect(notice).toBeHidden({ timeout: 30_000 });
  await expect(page.getByTestId("outage-banner")).toBeHidden();
  await expect(row).toBeVisible();
  await notReloaded(page);
  await servers.engine.api("DELETE", `/sandboxes/${id}`);
});

test("503 fleet_full with Retry-After: the list counts down from the server's 8 s, then refreshes", async ({
  connected: page,
  servers,
}) => {
  const id = await newSandbox(servers);
  await page.goto("/sandboxes");
  await expect(page.getByRole("link", { name: id })).toBeVisible();
  await markPage(page);
  await injectFault(servers.engine, {
    kind: "fleet_full",
    path: "^/v1/sandboxes$",
    method: "GET",
    retry_after_seconds: 8,
    count: 1,
  });
  await page.getByRole("button", { name: "Refresh now" }).click();
  const timer = page.getByTestId("retry-notice").getByRole("timer");
  // Retry-After, not the 1 s backoff: it starts at 8 and counts down.
  await expect(timer).toHaveText(/Retrying in [5-8] s/);
  await expect(page.getByTestId("retry-notice")).toContainText("fleet_full");
  await expect(timer).toHaveText(/Retrying in [1-4] s/);
  await expect(page.getByTestId("retry-notice")).toBeHidden({ timeout: 20_000 });
  await notReloaded(page);
  await servers.engine.api("DELETE", `/sandboxes/${id}`);
});

test("5 s of upstream latency: the first load says it is still waiting, then shows the list", async ({
  connected: page,
  servers,
}) => {
  const id = await newSandbox(servers);
  await injectFault(servers.engine, {
    kind: "latency",
    latency_ms: 5_000,
    path: "^/v1/sandboxes$",
    method: "GET",
    count: 1,
  });
  await page.goto("/sandboxes");
  await expect(page.getByTestId("slow-notice")).toContainText(/Still waiting for the list of sandboxes: \d+ s so far/);
  await shots(page, "faults-list-slow");
  await expect(page.getByRole("link", { name: id })).toBeVisible({ timeout: 20_000 });
  await expect(page.getByTestId("slow-notice")).toBeHidden();
  await servers.engine.api("DELETE", `/sandboxes/${id}`);
});

test("connection resets on the detail page: live status paused, retrying, then live again without a reload", async ({
  connected: page,
  servers,
}) => {
  const id = await newSandbox(servers);
  await page.goto(`/sandboxes/${id}`);
  await expect(page.getByRole("heading", { level: 1, name: id })).toBeVisible();
  await markPage(page);
  // The page's live stream reads the sandbox for it (one reset: it tells the page, which reads it
  // itself and meets the next). Baton's upstream transport sends a read once more when a reused
  // socket turns out closed, so each read may take two resets: four make the page's own read fail.
  await injectFault(servers.engine, { kind: "reset", path: `^/v1/sandboxes/${id}$`, method: "GET", count: 4 });
  const notice = page.getByTestId("retry-notice");
  await expect(notice).toContainText("Live status paused", { timeout: 20_000 });
  await expect(notice).toContainText("closed the connection before answering");
  await expect(notice).toContainText("Baton keeps retrying on its own");
  await shots(page, "faults-detail-reset");
  await expect(notice).toBeHidden({ timeout: 30_000 });
  await expect(page.getByTestId("sandbox-status")).toBeVisible();
  await notReloaded(page);
  await servers.engine.api("DELETE", `/sandboxes/${id}`);
});

test("a detail page whose server render met a reset says so and refreshes itself in place", async ({
  connected: page,
  servers,
}) => {
  const id = await newSandbox(servers);
  // Two: the upstream transport sends a read once more when a reused socket turns out closed.
  await injectFault(servers.engine, { kind: "reset", path: `^/v1/sandboxes/${id}$`, method: "GET", count: 2 });
  await page.goto(`/sandboxes/${id}`);
  await expect(page.getByText("This sandbox could not be loaded")).toBeVisible();
  await expect(page.getByText(/closed the connection before answering/)).toBeVisible();
  await expect(page.getByRole("timer")).toHaveText(/Retrying in \d+ s|Retrying now/);
  await markPage(page);
  await shots(page, "faults-detail-server-reset");
  // router.refresh() re-renders the server parts in place: the sandbox appears, the marker stays.
  await expect(page.getByTestId("sandbox-status")).toBeVisible({ timeout: 20_000 });
  await notReloaded(page);
  await servers.engine.api("DELETE", `/sandboxes/${id}`);
});

test("the create form keeps what was typed through fleet_full and a connection reset, and creates exactly once", async ({
  connected: page,
  servers,
}) => {
  const run = `r_${Date.now()}`;
  await page.goto("/sandboxes/new");
  await expect(page.getByRole("button", { name: "Create sandbox" })).toBeVisible();
  await page.getByLabel("Label 1 name").fill("agent_run");
  await page.getByLabel("Label 1 value").fill(run);
  await page.getByLabel("Variable 1 name").fill("GREETING");
  await page.getByLabel("Variable 1 value").fill("hello");
  await page.getByLabel("Timeout (seconds)").fill("900");
  const keys: string[] = [];
  page.on("request", (r) => {
    if (r.method() === "POST" && new URL(r.url()).pathname === "/api/v1/sandboxes")
      keys.push(r.headers()["idempotency-key"] ?? "");
  });
  const typed = async () => {
    await expect(page.getByLabel("Label 1 value")).toHaveValue(run);
    await expect(page.getByLabel("Variable 1 value")).toHaveValue("hello");
    await expect(page.getByLabel("Timeout (seconds)")).toHaveValue("900");
  };

  // 1. fleet_full, Retry-After 8: a countdown from 8; cancelling it leaves the form as typed.
  await injectFault(servers.engine, {
    kind: "fleet_full",
    path: "^/v1/sandboxes$",
    method: "POST",
    retry_after_seconds: 8,
    count: 1,
  });
  await page.getByRole("button", { name: "Create sandbox" }).click();
  const alert = page.getByTestId("create-error");
  await expect(alert.getByRole("timer")).toHaveText(/Retrying in [5-8] s/);
  await typed();
  await alert.getByRole("button", { name: "Cancel retry" }).click();
  await expect(alert).toContainText("Automatic retries stopped");
  await typed();

  // 2. The connection is reset on the next try: the form says the outcome is unknown, that sending
  // again is safe, and retries by itself with the same Idempotency-Key; one sandbox results.
  await injectFault(servers.engine, { kind: "reset", path: "^/v1/sandboxes$", method: "POST", count: 1 });
  await alert.getByRole("button", { name: "Retry now" }).click();
  await expect(alert).toContainText("The connection broke before an answer came");
  await expect(alert).toContainText("a sandbox is never created twice");
  await expect(alert).toContainText("upstream_reset");
  await typed();
  await shots(page, "faults-create-reset");
  await expect(page).toHaveURL(SANDBOX_ID, { timeout: 30_000 });

  expect(keys).toHaveLength(3);
  // fleet_full is a definitive refusal (fresh key next time); a reset is not (same key again).
  expect(keys[1]).not.toBe(keys[0]);
  expect(keys[2]).toBe(keys[1]);
  const listed = await servers.engine.api("GET", `/sandboxes?metadata[agent_run]=${run}`);
  expect(listed.body).toHaveLength(1);
  await servers.engine.api("DELETE", `/sandboxes/${listed.body[0].id}`);
});
