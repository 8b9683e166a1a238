import { test as base, expect } from "@playwright/test";
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { startEngine, type EngineHandle } from "../engine/test/helpers/engine.js";

/**
 * The system under test, once per worker: a real engine (engine/test/helpers/engine.ts) and a real
 * production Next server (`next build` when the build is older than the sources, then `next start`
 * on a free port) pointed at it. Tests get `baseURL` from here.
 */
export const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const SCREENS_DIR = path.join(ROOT, "test-results", "screens");
const NEXT_BIN = createRequire(import.meta.url).resolve("next/dist/bin/next");

/** Everything a production build is made from; a change to any of them makes .next stale. */
const BUILD_INPUTS = ["app", "components", "lib", "public", "proxy.ts", "next.config.ts", "tailwind.config.ts", "postcss.config.mjs", "tsconfig.json", "tsconfig.next.json", "package-lock.json"];

export interface Servers {
  engine: EngineHandle;
  /** The console's origin, e.g. http://127.0.0.1:40123 */
  baseURL: string;
  /** The console's BATON_DATA_DIR (a temp dir). */
  dataDir: string;
  /** The console's output so far (for failure messages). */
  log(): string;
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

function run(args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [NEXT_BIN, ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("exit", (code, signal) => (code === 0 ? resolve() : reject(new Error(`next ${args.join(" ")} failed (${signal ?? code}):\n${out}`))));
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function waitForServer(url: string, child: ChildProcess, log: () => string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`next start exited (${child.signalCode ?? child.exitCode}):\n${log()}`);
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

export const test = base.extend<object, { servers: Servers }>({
  servers: [
    // eslint-disable-next-line no-empty-pattern -- Playwright reads the fixture's dependencies from this pattern
    async ({}, use) => {
      const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1" };
      if (!buildIsFresh()) await run(["build"], env);

      const engine = await startEngine();
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-console-"));
      const port = await freePort();
      let out = "";
      const child = spawn(process.execPath, [NEXT_BIN, "start", "-p", String(port), "-H", "127.0.0.1"], {
        cwd: ROOT,
        env: { ...env, NODE_ENV: "production", PORT: String(port), ORKESTR_API_URL: engine.origin, BATON_DATA_DIR: dataDir },
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      });
      child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
      const baseURL = `http://127.0.0.1:${port}`;
      try {
        await waitForServer(`${baseURL}/login`, child, () => out);
        await use({ engine, baseURL, dataDir, log: () => out });
      } finally {
        await stopServer(child);
        await engine.stop();
        fs.rmSync(dataDir, { recursive: true, force: true });
        if (engine.dataDir) fs.rmSync(engine.dataDir, { recursive: true, force: true });
      }
    },
    // Includes a `next build` when the sources are newer than .next (minutes on 2 cores).
    { scope: "worker", timeout: 15 * 60_000 },
  ],
  baseURL: async ({ servers }, use) => {
    await use(servers.baseURL);
  },
});

export { expect };
