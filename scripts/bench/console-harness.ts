// The console as the browser-facing benchmarks need it: a fresh engine and the production console
// server (scripts/console-server.mjs, so `npx next build` first) on free ports with a temp data dir,
// an owner signed up (the session cookie a browser would carry) and the local engine connected.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { actAsAccountOf, startEngine, type EngineHandle } from "../../engine/test/helpers/engine";
import { freePort } from "../../engine/test/helpers/free-port";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface ConsoleBenchOptions {
  /** The checkout whose console (and `.next` build) runs: another one for an A/B (default: this one). */
  root?: string;
  /** Extra Node flags for the console process (e.g. `--cpu-prof` to profile it). */
  nodeArgs?: string[];
  /** postgres://… for the console's database; SQLite in the data dir when absent. */
  databaseUrl?: string;
  /** Extra environment for the engine (e.g. its plan). */
  engineEnv?: Record<string, string>;
}

export interface ConsoleBench {
  engine: EngineHandle;
  /** The engine account the bench owner's team uses (what its console lists). */
  account: string;
  /** e.g. http://127.0.0.1:40123 */
  origin: string;
  port: number;
  dataDir: string;
  /** The console server's process. */
  server: ChildProcess;
  /** `name=value; …` of the owner's session. */
  cookie: string;
  /** A JSON call to the console as the signed-in owner (Origin set, as a browser's mutation). */
  api(method: string, p: string, body?: unknown): Promise<Record<string, unknown> | null>;
  stop(): Promise<void>;
}

export async function startConsoleBench(name: string, opts: ConsoleBenchOptions = {}): Promise<ConsoleBench> {
  const root = opts.root ?? ROOT;
  if (!fs.existsSync(path.join(root, ".next", "BUILD_ID")))
    throw new Error(`no production build in ${root}: run \`npx next build\` there first`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `baton-bench-${name}-`));
  const engine = await startEngine({ dataDir, env: opts.engineEnv });
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  let log = "";
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: "production",
    NEXT_TELEMETRY_DISABLED: "1",
    ORKESTR_API_URL: engine.origin,
    BATON_DATA_DIR: dataDir,
  };
  if (opts.databaseUrl) env.DATABASE_URL = opts.databaseUrl;
  else delete env.DATABASE_URL;
  const server = spawn(
    process.execPath,
    [...(opts.nodeArgs ?? []), path.join(root, "scripts/console-server.mjs"), "-p", String(port), "-H", "127.0.0.1"],
    { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  server.stdout.on("data", (d: Buffer) => (log += d.toString()));
  server.stderr.on("data", (d: Buffer) => (log += d.toString()));
  const stop = async () => {
    // Waited for: a profile (--cpu-prof) is written as the process exits.
    const exited = new Promise<void>((resolve) => {
      if (server.exitCode !== null || server.signalCode !== null) return resolve();
      server.once("exit", () => resolve());
      setTimeout(() => server.kill("SIGKILL"), 10_000).unref();
    });
    server.kill("SIGTERM");
    await exited;
    await engine.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const deadline = Date.now() + 60_000;
    while (!/Ready in/.test(log)) {
      if (Date.now() > deadline || server.exitCode !== null)
        throw new Error(`the console server did not start:\n${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const setup = await fetch(`${origin}/api/setup`, {
      method: "POST",
      headers: { "content-type": "application/json", origin },
      // The first-run setup code the console printed at start (lib/server/setup-code.ts).
      body: JSON.stringify({
        name: "Bench",
        email: "bench@example.com",
        password: "correct horse battery staple",
        team_name: "Bench",
        setup_code: /the setup code is ([A-Z0-9-]+)/.exec(log)?.[1] ?? "",
      }),
    });
    if (setup.status !== 201) throw new Error(`setup failed: ${setup.status} ${await setup.text()}`);
    const cookie = setup.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    const api = async (method: string, p: string, body?: unknown) => {
      const r = await fetch(`${origin}${p}`, {
        method,
        headers: { cookie, origin, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${await r.text()}`);
      return r.status === 204 ? null : ((await r.json()) as Record<string, unknown>);
    };
    await api("POST", "/api/connections/local-engine");
    // engine.api and engine.token now act in the bench team's engine account, as its console does.
    const account = await actAsAccountOf(engine, "bench@example.com");
    return { engine, account, origin, port, dataDir, server, cookie, api, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
