import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { freePort } from "../engine/test/helpers/free-port";
import { ensureBuild, expect, OWNER, ROOT, test } from "./fixtures";
import { screenshot } from "./helpers";

// PostgreSQL restarted under load, against the real console server: while the database is down
// every request that needs it answers 503 database_unavailable with a sentence and Retry-After
// (never a 500, never a hung request, never a crashed server), and once it is back the same console
// serves again, with no restart of Baton. The spec runs its own throwaway cluster
// (scripts/postgres.sh on a free port, in its own directory), so restarting it disturbs no other test.

const SCRIPT = path.join(ROOT, "scripts", "postgres.sh");
const hasPostgres = fs.existsSync("/usr/lib/postgresql") && fs.readdirSync("/usr/lib/postgresql").length > 0;

test.describe.configure({ timeout: 6 * 60_000 });
// This spec starts its own servers: none of the shared fixture's (its baseURL would start them).
test.use({ baseURL: "http://127.0.0.1" });

test("PostgreSQL restarted while requests run: 503 database_unavailable with a message, then recovery without restarting Baton", async ({
  page,
}) => {
  test.skip(!hasPostgres, "PostgreSQL is not installed (bash scripts/postgres.sh installs it as root)");
  test.slow();
  await ensureBuild();
  const pgEnv = {
    ...process.env,
    BATON_PG_PORT: String(await freePort()),
    BATON_PG_DIR: path.join(os.tmpdir(), `baton-pg-e2e-${randomBytes(4).toString("hex")}`),
  };
  const cluster = (...args: string[]) =>
    execFileSync("bash", [SCRIPT, ...args], { env: pgEnv, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
  const url = cluster().split("\n").pop()!;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-dbrestart-"));
  const port = await freePort();
  let log = "";
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: "production",
    NEXT_TELEMETRY_DISABLED: "1",
    BATON_DATA_DIR: dataDir,
    DATABASE_URL: url,
  };
  const server: ChildProcess = spawn(
    process.execPath,
    [path.join(ROOT, "scripts", "console-server.mjs"), "-p", String(port), "-H", "127.0.0.1"],
    { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  server.stdout!.on("data", (d: Buffer) => (log += d.toString()));
  server.stderr!.on("data", (d: Buffer) => (log += d.toString()));
  const base = `http://127.0.0.1:${port}`;
  try {
    await expect
      .poll(async () => (/Ready in/.test(log) ? (await fetch(`${base}/login`).catch(() => null))?.status : 0), {
        timeout: 90_000,
        message: `the console did not come up:\n${log}`,
      })
      .toBe(200);
    const headers = { origin: base };
    const setupCode = /the setup code is ([A-Z0-9-]+)/.exec(log)?.[1];
    const setup = await page.request.post(`${base}/api/setup`, {
      headers,
      data: { ...OWNER, team_name: OWNER.teamName, setup_code: setupCode },
    });
    expect(setup.status(), await setup.text()).toBe(201);
    const login = await page.request.post(`${base}/api/auth/login`, {
      headers,
      data: { email: OWNER.email, password: OWNER.password },
    });
    expect(login.ok()).toBe(true);

    // Load: four clients reading the session's user (a database read per request) in a loop.
    const answers: { status: number; body: { code?: string; detail?: string }; retryAfter: string | null }[] = [];
    let running = true;
    const load = Array.from({ length: 4 }, async () => {
      while (running) {
        // A socket error is an answer too (status 0), reported with the others below.
        const r = await page.request.get(`${base}/api/me`, { headers, timeout: 30_000 }).catch((e: Error) => e);
        answers.push(
          r instanceof Error
            ? {
                status: 0,
                body: { detail: `${r.message.split("\n")[0]} at ${new Date().toISOString()}` },
                retryAfter: null,
              }
            : {
                status: r.status(),
                body: await r.json().catch(() => ({})),
                retryAfter: r.headers()["retry-after"] ?? null,
              },
        );
      }
    });
    await expect.poll(() => answers.filter((a) => a.status === 200).length).toBeGreaterThan(8);
    cluster("stop");
    // Requests meet the outage; the server answers them (none hangs, none is a 500).
    await expect.poll(() => answers.filter((a) => a.status === 503).length, { timeout: 30_000 }).toBeGreaterThan(4);

    // What a page shows meanwhile: the console's pages need the session too. It says what is wrong
    // and asks again by itself.
    // A bare URL (typed, bookmarked): once the database is back the server adds the team with a
    // redirect, so this page asks again with a new load.
    const bare = await page.context().newPage();
    await bare.goto(`${base}/sandboxes`);
    await expect(bare.getByTestId("database-outage")).toContainText("The Baton database is unavailable");
    // The team's URL, as every console link is: this one recovers in place.
    await page.goto(`${base}/sandboxes?team=analytical-engines`);
    const outage = page.getByTestId("database-outage");
    await expect(outage).toContainText("The Baton database is unavailable");
    await expect(outage.getByRole("timer")).toHaveText(/Retrying in \d+ s|Retrying now/);
    await page.evaluate(() => ((window as unknown as { __noReload: boolean }).__noReload = true));
    await page.emulateMedia({ colorScheme: "light" });
    await screenshot(page, "database-down-light");
    await page.emulateMedia({ colorScheme: "dark" });
    await screenshot(page, "database-down-dark");

    cluster();
    // The page recovers in place (router.refresh), no reload.
    await expect(page.getByRole("heading", { level: 1, name: "Sandboxes" })).toBeVisible({ timeout: 60_000 });
    expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
    await expect(bare.getByRole("heading", { level: 1, name: "Sandboxes" })).toBeVisible({ timeout: 60_000 });
    expect(new URL(bare.url()).searchParams.get("team")).toBe("analytical-engines");
    await bare.close();
    const before = answers.length;
    await expect
      .poll(() => answers.slice(before).filter((a) => a.status === 200).length, { timeout: 60_000 })
      .toBeGreaterThan(8);
    running = false;
    await Promise.all(load);

    const unexpected = answers.filter((a) => a.status !== 200 && a.status !== 503);
    expect(unexpected, JSON.stringify(unexpected.slice(0, 3))).toEqual([]);
    for (const a of answers.filter((x) => x.status === 503)) {
      expect(a.body.code).toBe("database_unavailable");
      expect(a.body.detail).toMatch(/The Baton database is unavailable .*Try again in \d+ s/);
      expect(Number(a.retryAfter)).toBeGreaterThan(0);
    }
    // The same process served throughout.
    expect(server.exitCode).toBeNull();
    await page.goto(`${base}/sandboxes`);
    await expect(page.getByRole("heading", { level: 1, name: "Sandboxes" })).toBeVisible();
  } catch (error) {
    console.log(`[database-restart] failed at ${new Date().toISOString()}: ${String(error).split("\n")[0]}`);
    // What the console said is the first thing to read when this fails (a crash, an unhandled error).
    const lines = [...new Set(log.split("\n"))].join("\n");
    console.log(
      `[database-restart] the console (exit ${server.exitCode}, signal ${server.signalCode}) said:\n${lines.slice(-8000)}`,
    );
    throw error;
  } finally {
    try {
      process.kill(-server.pid!, "SIGTERM");
    } catch {
      // gone
    }
    await new Promise((r) => setTimeout(r, 500));
    cluster("destroy");
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
