import http from "node:http";
import type { Page } from "@playwright/test";
import { expect, test, type Servers } from "./fixtures";
import { seriousAxeViolations } from "./a11y";
import { screenshot, watchForErrors } from "./helpers";

// Sandbox → Previews against the real engine and a real `next start`: a server started in a
// `restricted` sandbox is detected and shown in the sandboxed iframe (checked inside the frame),
// a preview_auth sandbox's iframe loads with the token the console supplies (the engine's preview
// cookie must survive the console's cross-site iframe), and off / paused / nothing-listening
// sandboxes say so plainly.
// A short instance name: the engine's preview relay sockets live under the console's temp data dir, and
// a unix socket path may not pass 107 bytes.
test.use({ consoleInstance: "previews" });
// Tall enough that the full-page screenshots need no viewport resize: a resize makes the preview's
// out-of-process iframe repaint, and a capture right after it can catch the frame blank.
test.use({ viewport: { width: 1280, height: 960 } });
test.describe.configure({ mode: "serial" });

const created: string[] = [];

async function createSandbox(
  servers: Servers,
  body: Record<string, unknown>,
): Promise<{ id: string; preview_auth_token?: string }> {
  const r = await servers.engine.api("POST", "/sandboxes", { template: "python-3.12", ...body });
  expect(r.status, r.text).toBe(201);
  created.push(r.body.id);
  return r.body;
}

/** A directory-listing server in the background: `python3 -m http.server` on `port`, serving /workspace/site. */
async function serve(servers: Servers, id: string, port: number) {
  const r = await servers.engine.api("POST", `/sandboxes/${id}/exec`, {
    command: `mkdir -p /workspace/site && cd /workspace/site && echo hi > hello-from-${port}.txt && nohup python3 -m http.server ${port} >/dev/null 2>&1 &`,
  });
  expect(r.body.exit_code, r.text).toBe(0);
  // Listening within a few seconds (the engine's own description says when).
  await expect
    .poll(async () => (await servers.engine.api("GET", `/sandboxes/${id}/previews/${port}`)).body.listening, {
      timeout: 15_000,
    })
    .toBe(true);
}

/** A request to a preview host straight at the engine (Node does not resolve *.localhost names itself). */
function previewStatus(servers: Servers, id: string, port: number, headers: Record<string, string>): Promise<number> {
  const engine = new URL(servers.engine.origin);
  return new Promise((resolve, reject) => {
    http
      .get(
        {
          host: engine.hostname,
          port: engine.port,
          path: "/",
          headers: { ...headers, host: `${port}-${id.toLowerCase()}.sbx.localhost:${engine.port}` },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      )
      .on("error", reject);
  });
}

/** A moment for the out-of-process preview frame to repaint (after a load or a colour-scheme switch) before a screenshot. */
async function settleFrames(page: Page) {
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  await page.waitForTimeout(400);
}

/** Preview hosts answer 401/502 pages on purpose in some tests; the console's own requests must not fail. */
const previewHost = (url: string) => new URL(url).hostname.endsWith(".sbx.localhost");

test.afterAll(async ({ servers }) => {
  for (const id of created) await servers.engine.api("DELETE", `/sandboxes/${id}`);
});

test("a server started in the sandbox is detected, listed and shown in the iframe", async ({
  connected: page,
  servers,
}) => {
  const problems = watchForErrors(page);
  const { id } = await createSandbox(servers, { network: "restricted" });
  await serve(servers, id, 8000);
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto(`/sandboxes/${id}/previews`);
  const ports = page.getByRole("list", { name: "Detected ports" });
  await expect(ports.getByRole("button", { name: /8000/ })).toBeVisible();
  // The egress proxy of a restricted sandbox (127.0.0.1:3128) is plumbing, not a preview.
  await expect(ports.getByRole("button", { name: /3128/ })).toHaveCount(0);
  await ports.getByRole("button", { name: /8000/ }).click();
  await expect(page).toHaveURL(/port=8000/);
  await expect(page.getByTestId("preview-url")).toHaveText(
    new RegExp(`^http://8000-${id.toLowerCase()}\\.sbx\\.localhost:\\d+$`),
  );
  await expect(page.getByText("Public", { exact: true })).toBeVisible();
  const iframe = page.locator("iframe[title='Preview of port 8000']");
  await expect(iframe).toHaveAttribute("sandbox", "allow-scripts allow-forms allow-same-origin allow-popups");
  await expect(iframe).toHaveAttribute("referrerpolicy", "no-referrer");
  const frame = page.frameLocator("iframe[title='Preview of port 8000']");
  await expect(frame.getByRole("heading", { name: "Directory listing for /" })).toBeVisible();
  await expect(frame.getByRole("link", { name: "hello-from-8000.txt" })).toBeVisible();
  await expect(page.getByRole("link", { name: /Open in new tab/ })).toHaveAttribute(
    "href",
    new RegExp(`^http://8000-${id.toLowerCase()}\\.sbx\\.localhost:\\d+/?$`),
  );

  // Reload re-creates the frame; it loads again.
  await page.getByRole("button", { name: "Reload" }).click();
  await expect(frame.getByRole("link", { name: "hello-from-8000.txt" })).toBeVisible();

  await settleFrames(page);
  await screenshot(page, "sandbox-previews-light");
  expect(await seriousAxeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: "dark" });
  await settleFrames(page);
  await screenshot(page, "sandbox-previews-dark");
  expect(await seriousAxeViolations(page)).toEqual([]);

  // Copy URL (after the axe runs: a toast fading in is measured mid-animation) puts the plain URL (never a token) on the clipboard.
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.getByRole("button", { name: "Copy URL" }).click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(
    await page.getByTestId("preview-url").textContent(),
  );

  // A server started later shows up on "Scan" (and by itself within the scan interval).
  await serve(servers, id, 8001);
  await page.getByRole("button", { name: "Scan again for listening ports" }).click();
  await expect(ports.getByRole("button", { name: /8001/ })).toBeVisible();

  // A typed port where nothing listens: said plainly, no iframe.
  await page.getByLabel("Port", { exact: true }).fill("9999");
  await page.getByRole("button", { name: "Preview", exact: true }).click();
  await expect(page.getByText("Nothing is listening on port 9999 right now")).toBeVisible();
  await expect(page.locator("iframe")).toHaveCount(0);
  await page.getByLabel("Port", { exact: true }).fill("70000");
  await page.getByRole("button", { name: "Preview", exact: true }).click();
  await expect(page.getByText("Enter a port from 1 to 65535.")).toBeVisible();
  expect(problems).toEqual([]);
});

test("a preview_auth sandbox: the URL is protected, and the iframe loads with the token the console supplies", async ({
  connected: page,
  servers,
}) => {
  const problems = watchForErrors(page, { allowStatus: (status, url) => previewHost(url) && status === 401 });
  const { id, preview_auth_token: token } = await createSandbox(servers, { network: "restricted", preview_auth: true });
  expect(token).toMatch(/^pvt_/);
  await serve(servers, id, 8000);
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto(`/sandboxes/${id}/previews?port=8000`);
  await expect(page.getByText("Protected", { exact: true })).toBeVisible();
  await expect(page.getByRole("heading", { name: "Port 8000 is protected" })).toBeVisible();
  await screenshot(page, "sandbox-previews-protected-light");
  expect(await seriousAxeViolations(page)).toEqual([]);

  // The token the user kept from create: pasted, the frame loads (the engine turns it into a cookie
  // that is SameSite=None; Secure; Partitioned, so it survives this cross-site iframe).
  await page.getByRole("textbox", { name: "Preview token" }).fill(token!);
  await page.getByRole("button", { name: "Use this token" }).click();
  const frame = page.frameLocator("iframe[title='Preview of port 8000']");
  await expect(frame.getByRole("heading", { name: "Directory listing for /" })).toBeVisible();
  await expect(frame.getByRole("link", { name: "hello-from-8000.txt" })).toBeVisible();
  // Links inside the frame work on the cookie alone (the token was in the first URL only).
  await frame.getByRole("link", { name: "hello-from-8000.txt" }).click();
  await expect(frame.locator("body")).toHaveText("hi");
  await page.emulateMedia({ colorScheme: "dark" });
  await settleFrames(page);
  await screenshot(page, "sandbox-previews-protected-dark");
  expect(await seriousAxeViolations(page)).toEqual([]);

  // Without the token: forget it; rotating makes a new one (after a warning) and the frame loads with it.
  await page.getByRole("button", { name: "Forget token" }).click();
  await page.getByRole("button", { name: "Rotate and use a new token…" }).click();
  const confirm = page.getByRole("dialog", { name: "Rotate the preview token?" });
  await expect(confirm).toContainText("stops working at once");
  await confirm.getByRole("button", { name: "Rotate token" }).click();
  await expect(frame.getByRole("heading", { name: "Directory listing for /" })).toBeVisible();
  // The old token is dead now.
  expect(await previewStatus(servers, id, 8000, { "x-orkestr-preview-token": token! })).toBe(401);
  expect(problems).toEqual([]);
});

test("clear messages: no network, paused, nothing to preview yet", async ({ connected: page, servers }) => {
  const problems = watchForErrors(page);
  const off = await createSandbox(servers, { network: "off" });
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto(`/sandboxes/${off.id}/previews?port=8000`);
  await expect(page.getByRole("heading", { name: "This sandbox has no network" })).toBeVisible();
  await expect(page.getByText(/network: "off"/)).toBeVisible();
  await expect(page.locator("iframe")).toHaveCount(0);
  await screenshot(page, "sandbox-previews-network-off-light");
  expect(await seriousAxeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: "dark" });
  await screenshot(page, "sandbox-previews-network-off-dark");
  expect(await seriousAxeViolations(page)).toEqual([]);

  const idle = await createSandbox(servers, { network: "restricted" });
  await page.goto(`/sandboxes/${idle.id}/previews`);
  await expect(page.getByTestId("ports-empty")).toContainText("python3 -m http.server 8000");
  await expect(page.getByRole("heading", { name: "Choose a port to preview" })).toBeVisible();
  await screenshot(page, "sandbox-previews-empty-dark");

  expect((await servers.engine.api("POST", `/sandboxes/${idle.id}/pause`)).status).toBe(200);
  await page.reload();
  await expect(page.getByRole("heading", { name: "This sandbox is paused" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Resume sandbox" })).toBeVisible();
  expect(problems).toEqual([]);
});
