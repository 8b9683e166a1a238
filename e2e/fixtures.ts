import { test as base, expect, type APIRequestContext, type Page } from "@playwright/test";
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { actAsAccountOf, startEngine, type EngineHandle } from "../engine/test/helpers/engine";
import { consoleDatabase, type ConsoleDatabaseKind } from "./database";
import { freePort } from "../engine/test/helpers/free-port";

/**
 * The system under test, once per worker: a real engine (engine/test/helpers/engine.ts) and a real
 * production Next server (`next build` when the build is older than the sources, then
 * scripts/console-server.mjs, `next start` plus the terminal relay, on a free port) pointed at it. Tests get `baseURL` from here.
 */
export const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const SCREENS_DIR = path.join(ROOT, "test-results", "screens");
const NEXT_BIN = createRequire(import.meta.url).resolve("next/dist/bin/next");
const CONSOLE_SERVER = path.join(ROOT, "scripts", "console-server.mjs");

/** Everything a production build is made from; a change to any of them makes .next stale. */
const BUILD_INPUTS = [
  "app",
  "components",
  "lib",
  "public",
  "proxy.ts",
  "next.config.ts",
  "tailwind.config.ts",
  "postcss.config.mjs",
  "tsconfig.json",
  "tsconfig.base.json",
  "package-lock.json",
];

export interface Servers {
  engine: EngineHandle;
  /** The console's origin, e.g. http://127.0.0.1:40123 */
  baseURL: string;
  /** The console's BATON_DATA_DIR (a temp dir). */
  dataDir: string;
  /** The console process's environment (its database and data dir): for seeding scripts. */
  env: NodeJS.ProcessEnv;
  /** The console's output so far (for failure messages). */
  log(): string;
  /** The first-run setup code the console printed in its log at start (lib/server/setup-code.ts). */
  setupCode(): string;
}

function newestMtime(p: string): number {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(p);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs; // catches deletions and renames inside the directory
  for (const entry of fs.readdirSync(p)) {
    if (entry === "node_modules" || entry.startsWith(".")) continue;
    newest = Math.max(newest, newestMtime(path.join(p, entry)));
  }
  return newest;
}

function buildIsFresh(): boolean {
  const buildId = path.join(ROOT, ".next", "BUILD_ID");
  if (!fs.existsSync(buildId)) return false;
  const sources = Math.max(...BUILD_INPUTS.map((p) => newestMtime(path.join(ROOT, p))));
  return fs.statSync(buildId).mtimeMs > sources;
}

/** `next build` when .next is missing or older than the sources (minutes on 2 cores); also for specs that start their own servers. */
export async function ensureBuild(env: NodeJS.ProcessEnv = { ...process.env, NEXT_TELEMETRY_DISABLED: "1" }) {
  if (!buildIsFresh()) await run(["build"], env);
}

function run(args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [NEXT_BIN, ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("exit", (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`next ${args.join(" ")} failed (${signal ?? code}):\n${out}`)),
    );
  });
}

async function waitForServer(url: string, child: ChildProcess, log: () => string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`next start exited (${child.signalCode ?? child.exitCode}):\n${log()}`);
    // Another process may take the free port between freePort() and Next's listen (other test
    // runs share this machine): only an answer after Next said it is ready counts as Next's.
    if (!/Ready in/.test(log())) {
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    try {
      const response = await fetch(url, { redirect: "manual" });
      if (response.status < 500) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`next start did not answer ${url} within ${timeoutMs} ms:\n${log()}`);
}

/** SIGTERM to the server's process group (it was started detached, so that is exactly its tree), then SIGKILL. */
async function stopServer(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // already gone
    }
  };
  signalGroup("SIGTERM");
  const timer = setTimeout(() => signalGroup("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

/** The owner account that the `owner` fixture sets up on a fresh console (first run, through the API). */
export const OWNER = {
  name: "Ada Lovelace",
  email: "ada@example.com",
  password: "correct horse battery staple",
  teamName: "Analytical Engines",
} as const;

export type Owner = typeof OWNER;

interface WorkerFixtures {
  /**
   * Which console instance the worker runs against. Each value gets its own worker and so its own
   * servers and database: a spec that needs a console nobody has set up yet (the first-run tests)
   * uses `test.use({ consoleInstance: "…" })`.
   */
  consoleInstance: string;
  /**
   * The console's own database: "sqlite" (the embedded default) or "postgres" (a fresh schema in
   * TEST_DATABASE_URL's server). playwright.config.ts runs every spec once per database.
   */
  database: ConsoleDatabaseKind;
  /**
   * Extra environment for the console process (e.g. BATON_SMTP_URL of a mail server the spec
   * starts): a spec overrides it with `test.use({ consoleEnv: … })`, or with a worker fixture of
   * its own when the value is only known at run time.
   */
  consoleEnv: Record<string, string>;
  servers: Servers;
  /** Runs the first-run setup (POST /api/setup) unless it was done already; the owner's credentials. */
  owner: Owner;
  /** The owner signed in once per worker (POST /api/auth/login): cookies to put into a browser context. */
  ownerState: StorageState;
  /**
   * The owner's active connection to the worker's local engine ("Use the local engine"), made once
   * per worker. From then on `servers.engine.api` acts in the owner's team account (`account`), so
   * what a test makes through it is what the owner's console shows.
   */
  localEngine: { connectionId: string; account: string };
}

interface TestFixtures {
  /** The test's `page`, signed in as the owner (its context carries the owner's session cookie). */
  signedIn: Page;
  /** `signedIn`, with the local engine connected: the sandbox pages have a real backend. */
  connected: Page;
}

type StorageState = Awaited<ReturnType<APIRequestContext["storageState"]>>;

export const test = base.extend<TestFixtures, WorkerFixtures>({
  consoleInstance: ["shared", { scope: "worker", option: true }],
  database: ["sqlite", { scope: "worker", option: true }],
  consoleEnv: [{}, { scope: "worker", option: true }],
  servers: [
    async ({ consoleInstance, database, consoleEnv: extraEnv }, use) => {
      const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1" };
      await ensureBuild(env);

      // The embedded default: engine and console share one BATON_DATA_DIR (the engine keeps its state
      // under engine/), so the console can read the bootstrap secret for "Use the local engine".
      const dataDir = fs.mkdtempSync(
        path.join(os.tmpdir(), `baton-console-${consoleInstance.replace(/[^a-z0-9-]/gi, "")}-`),
      );
      // The console's port first: the engine allows the console's own webhook receiver
      // (/api/hooks/<id> on this origin) and no other internal address, as `npm start` sets it up.
      const port = await freePort();
      const engine = await startEngine({
        dataDir,
        env: { ORKESTR_ENGINE_WEBHOOK_ALLOW: `http://127.0.0.1:${port}/api/hooks/` },
      });
      const db = await consoleDatabase(database);
      let out = "";
      const consoleEnv: NodeJS.ProcessEnv = {
        ...env,
        NODE_ENV: "production",
        PORT: String(port),
        ORKESTR_API_URL: engine.origin,
        BATON_DATA_DIR: dataDir,
        ...db.env,
        ...extraEnv,
      };
      // A DATABASE_URL from the runner's shell must not turn the SQLite project into a Postgres one.
      if (!db.env.DATABASE_URL) delete consoleEnv.DATABASE_URL;
      // The console's own server (Next's handler plus the terminal WebSocket relay), as `npm start` runs it.
      const child = spawn(process.execPath, [CONSOLE_SERVER, "-p", String(port), "-H", "127.0.0.1"], {
        cwd: ROOT,
        env: consoleEnv,
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      });
      child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
      const baseURL = `http://127.0.0.1:${port}`;
      try {
        await waitForServer(`${baseURL}/login`, child, () => out);
        // The console prints it in its log and keeps it in its data dir: read it as an admin would.
        const setupCode = () => {
          const printed = /the setup code is ([A-Z0-9-]+)/.exec(out)?.[1];
          if (!printed) throw new Error(`the console printed no setup code:\n${out}`);
          return printed;
        };
        await use({ engine, baseURL, dataDir, env: consoleEnv, log: () => out, setupCode });
      } finally {
        await stopServer(child);
        await engine.stop();
        await db.drop();
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    },
    // Includes a `next build` when the sources are newer than .next (minutes on 2 cores).
    { scope: "worker", timeout: 15 * 60_000 },
  ],
  owner: [
    async ({ servers }, use) => {
      const response = await fetch(`${servers.baseURL}/api/setup`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: servers.baseURL },
        body: JSON.stringify({
          name: OWNER.name,
          email: OWNER.email,
          password: OWNER.password,
          team_name: OWNER.teamName,
          setup_code: servers.setupCode(),
        }),
      });
      // 409 already_set_up: an earlier test of this worker did it (the sign-in below proves it was us).
      if (response.status !== 201 && response.status !== 409) {
        throw new Error(`first-run setup failed: ${response.status} ${await response.text()}\n${servers.log()}`);
      }
      await use(OWNER);
    },
    { scope: "worker" },
  ],
  ownerState: [
    async ({ servers, owner, playwright }, use) => {
      const api = await playwright.request.newContext({ baseURL: servers.baseURL });
      const response = await api.post("/api/auth/login", {
        data: { email: owner.email, password: owner.password },
        headers: { origin: servers.baseURL },
      });
      if (!response.ok()) throw new Error(`signing the owner in failed: ${response.status()} ${await response.text()}`);
      const state = await api.storageState();
      await api.dispose();
      await use(state);
    },
    { scope: "worker" },
  ],
  localEngine: [
    async ({ servers, ownerState, playwright }, use) => {
      const api = await playwright.request.newContext({ baseURL: servers.baseURL, storageState: ownerState });
      const response = await api.post("/api/connections/local-engine", { headers: { origin: servers.baseURL } });
      if (!response.ok())
        throw new Error(
          `connecting the local engine failed: ${response.status()} ${await response.text()}\n${servers.log()}`,
        );
      const { connection } = (await response.json()) as { connection: { id: string } };
      await api.dispose();
      const account = await actAsAccountOf(servers.engine, OWNER.email);
      await use({ connectionId: connection.id, account });
    },
    { scope: "worker" },
  ],
  baseURL: async ({ servers }, use) => {
    await use(servers.baseURL);
  },
  signedIn: async ({ page, context, ownerState }, use) => {
    await context.addCookies(ownerState.cookies);
    await use(page);
  },
  connected: async ({ page, context, ownerState, localEngine }, use) => {
    void localEngine;
    await context.addCookies(ownerState.cookies);
    await use(page);
  },
});

export { expect };
