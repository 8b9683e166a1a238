import type { APIRequestContext, Locator, Page } from "@playwright/test";
import { WebSocket as NodeWebSocket } from "ws";
import { expect, test } from "./fixtures";
import { seriousAxeViolations } from "./a11y";
import { screenshot, watchForErrors } from "./helpers";

// The sandbox terminal (issue 6), against the real console server (Next + the WebSocket relay) and
// the real engine: interactive PTY sessions through the relay, and line mode over streaming exec.
test.use({ consoleInstance: "sandbox-terminal" });

/** Full-page screenshot from the top (focusing the terminal may have scrolled the page). */
async function shot(page: Page, name: string): Promise<void> {
  await page.evaluate(() => window.scrollTo(0, 0));
  await screenshot(page, name);
}

/** A whole orkestr token; hints are "ork_…abcd". */
const ANY_TOKEN = /(?<![A-Za-z0-9_-])(ork|sp_live)_[A-Za-z0-9_-]{16,}/;

async function createSandbox(page: Page, baseURL: string): Promise<string> {
  const res = await page.request.post("/api/v1/sandboxes", {
    data: { template: "python-3.12", timeout_seconds: 1800, metadata: { spec: "sandbox-terminal" } },
    headers: { origin: baseURL },
  });
  expect(res.status(), await res.text()).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

async function terminate(request: APIRequestContext, baseURL: string, id: string): Promise<void> {
  await request.delete(`/api/v1/sandboxes/${id}`, { headers: { origin: baseURL } }).catch(() => undefined);
}

/** The visible terminal of the active tab. */
function activeTerminal(page: Page): Locator {
  return page.locator('[role="tabpanel"]:not([hidden]) [data-testid="terminal"]');
}

/** What the active terminal shows in its viewport (xterm's DOM renderer draws rows as text). */
async function screenText(page: Page): Promise<string> {
  return activeTerminal(page).locator(".xterm-rows").innerText();
}

async function expectOnScreen(page: Page, text: string | RegExp, timeout = 15_000): Promise<void> {
  await expect
    .poll(() => screenText(page), { timeout, message: `terminal shows ${String(text)}` })
    .toMatch(typeof text === "string" ? new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")) : text);
}

async function typeLine(page: Page, line: string): Promise<void> {
  await page.keyboard.type(line);
  await page.keyboard.press("Enter");
}

/** The processes in the sandbox, as command lines (through the plain exec API). */
async function processes(page: Page, baseURL: string, id: string): Promise<string[]> {
  const res = await page.request.post(`/api/v1/sandboxes/${id}/exec`, {
    data: { command: "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f 2>/dev/null; echo; done" },
    headers: { origin: baseURL },
  });
  expect(res.ok()).toBe(true);
  return ((await res.json()) as { stdout: string }).stdout.split("\n").map((l) => l.trim());
}

async function openTerminal(page: Page): Promise<void> {
  const tabsBefore = await page.getByRole("tab").count();
  await page.getByRole("button", { name: /^(Open|New) terminal$/ }).click();
  await expect(page.getByRole("tab")).toHaveCount(tabsBefore + 1);
  await expect(activeTerminal(page)).toHaveAttribute("data-status", "ready", { timeout: 20_000 });
  await activeTerminal(page).click();
}

test.describe.serial("sandbox terminal", () => {
  let sandboxId = "";

  test.beforeAll(async ({ browser, ownerState, localEngine, baseURL }) => {
    void localEngine;
    const context = await browser.newContext({ storageState: ownerState, baseURL });
    const page = await context.newPage();
    sandboxId = await createSandbox(page, baseURL!);
    await context.close();
  });

  test.afterAll(async ({ playwright, ownerState, baseURL }) => {
    const api = await playwright.request.newContext({ baseURL, storageState: ownerState });
    await terminate(api, baseURL!, sandboxId);
    await api.dispose();
  });

  test("interactive PTY: python, Ctrl-C, top, vim, resize, no token on the wire", async ({
    connected: page,
    baseURL,
  }) => {
    test.setTimeout(120_000);
    const problems = watchForErrors(page);
    const frames: string[] = [];
    page.on("websocket", (ws) => {
      ws.on("framesent", (f) => frames.push(typeof f.payload === "string" ? f.payload : f.payload.toString("utf8")));
      ws.on("framereceived", (f) =>
        frames.push(typeof f.payload === "string" ? f.payload : f.payload.toString("utf8")),
      );
    });
    await page.goto(`/sandboxes/${sandboxId}/terminal`);
    await expect(page.getByRole("heading", { name: "Terminal", level: 2 })).toBeVisible();
    await expect(page.getByText("No terminal open")).toBeVisible();
    await expect(page.getByLabel("Interactive (PTY)")).toBeChecked();
    await shot(page, "sandbox-terminal-empty-light");
    expect(await seriousAxeViolations(page, { scope: "main" })).toEqual([]);
    await page.emulateMedia({ colorScheme: "dark" });
    await shot(page, "sandbox-terminal-empty-dark");
    expect(await seriousAxeViolations(page, { scope: "main" })).toEqual([]);
    await page.emulateMedia({ colorScheme: "light" });

    await openTerminal(page);
    await typeLine(page, 'python3 -c "print(sum(range(1_000_000)))"');
    await expectOnScreen(page, "499999500000");

    // Ctrl-C reaches the foreground process through the pty's line discipline.
    await typeLine(page, "sleep 100");
    await expect.poll(async () => (await processes(page, baseURL!, sandboxId)).includes("sleep 100")).toBe(true);
    await page.keyboard.press("Control+C");
    await expect
      .poll(async () => (await processes(page, baseURL!, sandboxId)).includes("sleep 100"), { timeout: 5_000 })
      .toBe(false);
    await typeLine(page, "echo after-$((20+22))");
    await expectOnScreen(page, "after-42", 5_000);

    // A full-screen program: top draws its screen, q quits it.
    await typeLine(page, "top -d 1");
    await expectOnScreen(page, /Tasks:|load average/);
    await page.keyboard.press("q");
    await typeLine(page, "clear; echo top-quit");
    await expectOnScreen(page, "top-quit");

    // vim: insert mode, Escape, :wq — the file it wrote is read back by the shell.
    await typeLine(page, "vim -u NONE -N /workspace/from-vim.txt");
    await expectOnScreen(page, /\[New/); // vim's status line for a new file: it is ready for keys
    await page.keyboard.press("i");
    await page.keyboard.type("written in vim");
    await page.keyboard.press("Escape");
    await typeLine(page, ":wq");
    await typeLine(page, "clear; cat /workspace/from-vim.txt; echo vim-done");
    await expectOnScreen(page, /written in vim\s+vim-done/);

    // Resize follows the pane: the pty's size changes with the window.
    await typeLine(page, "clear; stty size");
    await expectOnScreen(page, /^\d+ \d+$/m);
    const before = /^(\d+) (\d+)$/m.exec(await screenText(page))!;
    await page.setViewportSize({ width: 900, height: 600 });
    await page.waitForTimeout(300);
    await typeLine(page, "clear; stty size");
    await expect.poll(async () => /^(\d+) (\d+)$/m.exec(await screenText(page))?.[0] ?? before[0]).not.toBe(before[0]);
    const after = /^(\d+) (\d+)$/m.exec(await screenText(page))!;
    expect(Number(after[2])).toBeLessThan(Number(before[2]));
    await page.setViewportSize({ width: 1280, height: 720 });

    await typeLine(page, "clear; ls -la /workspace; echo ready-for-screenshot");
    await expectOnScreen(page, "ready-for-screenshot");
    await shot(page, "sandbox-terminal-pty-light");
    expect(await seriousAxeViolations(page, { scope: "main" })).toEqual([]);
    await page.emulateMedia({ colorScheme: "dark" });
    await page.evaluate(() => document.documentElement.classList.add("dark"));
    await shot(page, "sandbox-terminal-pty-dark");
    expect(await seriousAxeViolations(page, { scope: "main" })).toEqual([]);

    // Nothing the browser got or sent holds a token, frames and page alike.
    expect(frames.length).toBeGreaterThan(0);
    for (const f of frames) expect(f).not.toMatch(ANY_TOKEN);
    expect(await page.content()).not.toMatch(ANY_TOKEN);
    expect(problems).toEqual([]);
  });

  test("several terminals in tabs, keyboard between them; closing one asks first", async ({ connected: page }) => {
    await page.goto(`/sandboxes/${sandboxId}/terminal`);
    await openTerminal(page);
    await typeLine(page, "echo first-tab");
    await expectOnScreen(page, "first-tab");
    await openTerminal(page);
    await typeLine(page, "echo second-tab");
    await expectOnScreen(page, "second-tab");
    expect(await screenText(page)).not.toContain("first-tab");
    await page.getByRole("tab", { name: /Terminal 1/ }).click();
    await expectOnScreen(page, "first-tab");

    // Keyboard: arrows move between tabs, Delete asks to close the focused one.
    await page.getByRole("tab", { name: /Terminal 1/ }).focus();
    await page.keyboard.press("ArrowRight");
    await expect(page.getByRole("tab", { name: /Terminal 2/ })).toHaveAttribute("aria-selected", "true");
    await page.keyboard.press("Delete");
    const dialog = page.getByRole("dialog", { name: "Close Terminal 2?" });
    await expect(dialog).toBeVisible();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await expect(page.getByRole("tab")).toHaveCount(2);
    await page.getByRole("button", { name: "Close Terminal 2" }).click();
    await expect(dialog).toBeVisible();
    await dialog.getByRole("button", { name: "Close terminal" }).click();
    await expect(page.getByRole("tab")).toHaveCount(1);
    await expectOnScreen(page, "first-tab");
  });

  test("reconnects after a network drop, keeps its scrollback and blocks input meanwhile", async ({
    connected: page,
    context,
  }) => {
    test.setTimeout(90_000);
    await page.goto(`/sandboxes/${sandboxId}/terminal`);
    await openTerminal(page);
    await typeLine(page, "echo before-drop");
    await expectOnScreen(page, "before-drop");
    // Output produced while the browser is away must show up after it reconnects (once).
    await typeLine(page, "sleep 3; echo while-$((1+1))-away");
    await context.setOffline(true);
    await expect(activeTerminal(page)).toHaveAttribute("data-status", "reconnecting", { timeout: 15_000 });
    await expect(page.getByTestId("terminal-status").first()).toContainText("input is paused");
    await page.keyboard.type("lost-keystrokes");
    await page.waitForTimeout(3_500);
    await context.setOffline(false);
    await expect(activeTerminal(page)).toHaveAttribute("data-status", "ready", { timeout: 20_000 });
    await expectOnScreen(page, "while-2-away");
    const text = await screenText(page);
    expect(text.match(/while-2-away/g)?.length).toBe(1);
    expect(text).toContain("before-drop");
    expect(text).not.toContain("lost-keystrokes");
    await typeLine(page, "echo after-reconnect");
    await expectOnScreen(page, "after-reconnect");
  });

  test("100k lines stay smooth", async ({ connected: page }) => {
    test.setTimeout(120_000);
    await page.goto(`/sandboxes/${sandboxId}/terminal`);
    await openTerminal(page);
    await typeLine(page, "clear");
    const started = Date.now();
    await typeLine(page, "seq 1 100000; echo seq-$((6*7))-done");
    await expectOnScreen(page, /^100000\s*$[\s\S]*seq-42-done/m, 60_000);
    const ms = Date.now() - started;
    // The page stays responsive: a frame is drawn promptly right after the flood.
    const frameMs = await page.evaluate(
      () =>
        new Promise<number>((resolve) => {
          const t = performance.now();
          requestAnimationFrame(() => resolve(performance.now() - t));
        }),
    );
    test.info().annotations.push({
      type: "pty seq 1 100000",
      description: `${ms} ms to the last line on screen; next frame after ${frameMs.toFixed(0)} ms`,
    });
    console.log(`[terminal] PTY: seq 1 100000 rendered in ${ms} ms`);
    expect(ms).toBeLessThan(30_000);
    expect(frameMs).toBeLessThan(500);
  });

  test("line mode: stdout and stderr told apart, cd remembered, history, Ctrl-C, 100k lines", async ({
    connected: page,
    baseURL,
  }) => {
    test.setTimeout(120_000);
    const problems = watchForErrors(page);
    await page.goto(`/sandboxes/${sandboxId}/terminal?mode=line`);
    await expect(page.getByLabel("Line mode (exec)")).toBeChecked();
    await openTerminal(page);
    await expect(page.getByRole("tab", { name: /Line 1/ })).toBeVisible();

    await typeLine(page, 'python3 -c "print(sum(range(1_000_000)))"');
    await expectOnScreen(page, "499999500000");

    await typeLine(page, "echo to-stdout; echo to-stderr >&2");
    await expectOnScreen(page, "to-stderr");
    // stderr is drawn in ANSI red (xterm's DOM renderer: class xterm-fg-1), stdout in the default colour.
    await expect(activeTerminal(page).locator(".xterm-rows span.xterm-fg-1", { hasText: "to-stderr" })).toHaveCount(1);
    await expect(activeTerminal(page).locator(".xterm-rows span.xterm-fg-1", { hasText: "to-stdout" })).toHaveCount(0);

    await typeLine(page, "cd /tmp");
    await typeLine(page, "pwd");
    await expectOnScreen(page, /^\/tmp$/m);
    await expectOnScreen(page, /^\/tmp \$\s*$/m);
    // History: ↑ brings back the last command.
    await typeLine(page, "echo history-check");
    await page.keyboard.press("ArrowUp");
    await page.keyboard.press("ArrowUp");
    await expectOnScreen(page, /^\/tmp \$ pwd\s*$/m);
    await page.keyboard.press("Enter");

    // Ctrl-C aborts the request, and the server kills the command (kill_on_disconnect).
    await typeLine(page, "sleep 100");
    await expect(activeTerminal(page)).toHaveAttribute("data-status", "running");
    await expect.poll(async () => (await processes(page, baseURL!, sandboxId)).includes("sleep 100")).toBe(true);
    await page.keyboard.press("Control+C");
    await expect(activeTerminal(page)).toHaveAttribute("data-status", "ready");
    await expect
      .poll(async () => (await processes(page, baseURL!, sandboxId)).includes("sleep 100"), { timeout: 5_000 })
      .toBe(false);

    await typeLine(page, "clear");
    const started = Date.now();
    await typeLine(page, "seq 1 100000");
    await expectOnScreen(page, /^100000\s*$[\s\S]*\/tmp \$/m, 60_000);
    const ms = Date.now() - started;
    test
      .info()
      .annotations.push({ type: "line mode seq 1 100000", description: `${ms} ms to the last line on screen` });
    console.log(`[terminal] line mode: seq 1 100000 rendered in ${ms} ms`);
    expect(ms).toBeLessThan(30_000);

    await typeLine(page, "echo to-stdout; ls /nonexistent");
    await expectOnScreen(page, "No such file");
    await shot(page, "sandbox-terminal-line-light");
    expect(await seriousAxeViolations(page, { scope: "main" })).toEqual([]);
    await page.emulateMedia({ colorScheme: "dark" });
    await page.evaluate(() => document.documentElement.classList.add("dark"));
    await shot(page, "sandbox-terminal-line-dark");
    expect(await seriousAxeViolations(page, { scope: "main" })).toEqual([]);
    expect(problems).toEqual([]);
  });

  test("the relay refuses a WebSocket from another origin or without a session", async ({
    connected: page,
    baseURL,
    ownerState,
  }) => {
    const open = await page.request.post(`/api/v1/sandboxes/${sandboxId}/pty`, {
      data: { cols: 80, rows: 24 },
      headers: { origin: baseURL! },
    });
    expect(open.status()).toBe(201);
    const ptyId = ((await open.json()) as { id: string }).id;
    const wsUrl = `${baseURL!.replace(/^http/, "ws")}/api/v1/sandboxes/${sandboxId}/pty/${ptyId}/ws`;
    const cookie = ownerState.cookies.map((c) => `${c.name}=${c.value}`).join("; ");
    /** The HTTP status the upgrade got (101 when it opened). */
    const attempt = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const ws = new NodeWebSocket(wsUrl, { headers });
        ws.on("open", () => (ws.close(), resolve(101)));
        ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
        ws.on("error", reject);
      });
    expect(await attempt({ origin: baseURL!, cookie })).toBe(101);
    expect(await attempt({ origin: baseURL! })).toBe(401);
    expect(await attempt({ origin: "http://evil.example", cookie })).toBe(403);
    expect(await attempt({ cookie })).toBe(403);
    await page.request.delete(`/api/v1/sandboxes/${sandboxId}/pty/${ptyId}`, { headers: { origin: baseURL! } });
  });
});
