import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "../engine/test/helpers/free-port";
import { ensureBuild, expect, OWNER, ROOT, test } from "./fixtures";
import { screenshot } from "./helpers";

// `npm start` as a supervisor, end to end: scripts/start.mjs with its own ports and data dir, the
// engine SIGKILLed under it. The console must stay up and say the orkestr API is not answering
// (since when, retrying), the engine must come back by itself, the page must recover without a
// reload, and SIGTERM must still stop everything. What becomes of the sandbox that was running
// (failed today, or re-adopted once sandboxes outlive the engine) is deliberately not looked at.

// Long enough that the outage is certainly seen (the test asks for the list right after the kill);
// the default is 1 s.
const RESTART_MS = 5_000;

/** Every descendant of `pid` whose command line contains `needle`, from /proc. */
function descendants(pid: number, needle: string): number[] {
  const parent = new Map<number, number>();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after the parenthesised command name: state, ppid, …
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parent.set(Number(entry), ppid);
    } catch {
      // gone meanwhile
    }
  }
  const isBelow = (p: number) => {
    for (let q = parent.get(p); q !== undefined && q > 1; q = parent.get(q)) if (q === pid) return true;
    return false;
  };
  return [...parent.keys()].filter((p) => {
    if (!isBelow(p)) return false;
    try {
      return fs.readFileSync(`/proc/${p}/cmdline`, "utf8").includes(needle);
    } catch {
      return false;
    }
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test.describe.configure({ timeout: 6 * 60_000 });
// This spec starts its own servers: none of the shared fixture's (its baseURL would start them).
test.use({ baseURL: "http://127.0.0.1" });

test("under npm start, a SIGKILLed engine restarts while the console stays up, shows the outage and recovers without a reload", async ({
  page,
}) => {
  test.slow();
  await ensureBuild();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-supervisor-"));
  const port = await freePort();
  const enginePort = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: "127.0.0.1",
    ORKESTR_ENGINE_PORT: String(enginePort),
    BATON_DATA_DIR: dataDir,
    BATON_RESTART_MIN_MS: String(RESTART_MS),
    BATON_RESTART_MAX_MS: String(RESTART_MS),
  };
  delete env.DATABASE_URL;
  delete env.ORKESTR_API_URL;
  let log = "";
  const supervisor: ChildProcess = spawn(process.execPath, ["scripts/start.mjs"], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  supervisor.stdout!.on("data", (d: Buffer) => (log += d.toString()));
  supervisor.stderr!.on("data", (d: Buffer) => (log += d.toString()));
  const exited = new Promise<number | null>((resolve) => supervisor.once("exit", (code) => resolve(code)));
  const base = `http://127.0.0.1:${port}`;
  try {
    await expect
      .poll(async () => (/Ready in/.test(log) ? (await fetch(`${base}/login`).catch(() => null))?.status : 0), {
        timeout: 90_000,
        message: `the console under npm start did not come up:\n${log}`,
      })
      .toBe(200);
    const setupCode = /the setup code is ([A-Z0-9-]+)/.exec(log)?.[1];
    expect(setupCode, log).toBeTruthy();
    const headers = { origin: base };
    const setup = await page.request.post(`${base}/api/setup`, {
      headers,
      data: {
        name: OWNER.name,
        email: OWNER.email,
        password: OWNER.password,
        team_name: OWNER.teamName,
        setup_code: setupCode,
      },
    });
    expect(setup.status(), await setup.text()).toBe(201);
    const login = await page.request.post(`${base}/api/auth/login`, {
      headers,
      data: { email: OWNER.email, password: OWNER.password },
    });
    expect(login.ok()).toBe(true);
    expect((await page.request.post(`${base}/api/connections/local-engine`, { headers })).ok()).toBe(true);
    const created = await page.request.post(`${base}/api/v1/sandboxes`, {
      headers,
      data: { template: "python-3.12" },
    });
    expect(created.status(), await created.text()).toBe(201);
    const { id } = (await created.json()) as { id: string };

    await page.goto(`${base}/sandboxes`);
    const row = page.getByRole("link", { name: id });
    await expect(row).toBeVisible();
    await page.evaluate(() => ((window as unknown as { __noReload: boolean }).__noReload = true));
    const consolePid = Number(/\[start\] console started \(pid (\d+)\)/.exec(log)?.[1]);
    expect(consolePid).toBeGreaterThan(0);

    // The crash: every engine process (the launcher and the engine it re-executes) at once.
    const engines = descendants(supervisor.pid!, "engine/src/server.ts");
    expect(engines.length, log).toBeGreaterThan(0);
    for (const pid of engines) process.kill(pid, "SIGKILL");
    await page.getByRole("button", { name: "Refresh now" }).click();

    const banner = page.getByTestId("outage-banner");
    await expect(banner).toContainText(/The orkestr API is not answering since \d\d:\d\d:\d\d/);
    await expect(banner).toContainText("refused the connection");
    await expect(banner.getByRole("timer")).toHaveText(/Retrying in \d+ s|Retrying now/);
    await expect(page.getByTestId("retry-notice")).toContainText("The list is not refreshing");
    // The header's indicator checks at once too: never "Connected" beside that banner.
    const headerStatus = page.locator("header").getByRole("status");
    await expect(headerStatus).toContainText("Not answering");
    await page.emulateMedia({ colorScheme: "light" });
    await screenshot(page, "supervisor-engine-down-light");
    await page.emulateMedia({ colorScheme: "dark" });
    await screenshot(page, "supervisor-engine-down-dark");
    await page.emulateMedia({ colorScheme: "light" });
    // The console stayed up through it; the supervisor said what it does.
    expect(alive(consolePid)).toBe(true);
    expect(log).toMatch(/\[start\] engine exited \((SIGKILL|code \d+)\) after [\d.]+ s; restarting in 5 s/);

    // The engine is back by itself; the page recovers in place.
    await expect(banner).toBeHidden({ timeout: 90_000 });
    await expect(page.getByTestId("retry-notice")).toBeHidden();
    await expect(headerStatus).toContainText("Connected");
    await expect(row).toBeVisible();
    expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
    expect(log.match(/\[start\] engine started \(pid \d+\)/g)?.length ?? 0).toBeGreaterThanOrEqual(2);
    expect(alive(consolePid)).toBe(true);
    const engineNow = descendants(supervisor.pid!, "engine/src/server.ts");

    // SIGTERM (as from a service manager, or Ctrl-C's SIGINT) stops both, cleanly.
    supervisor.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(log).toMatch(/\[start\] engine stopped/);
    expect(log).toMatch(/\[start\] console stopped/);
    for (const pid of [consolePid, ...engineNow]) expect(alive(pid), `pid ${pid}`).toBe(false);
  } finally {
    if (supervisor.exitCode === null && supervisor.signalCode === null) {
      try {
        process.kill(-supervisor.pid!, "SIGKILL");
      } catch {
        // gone
      }
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
