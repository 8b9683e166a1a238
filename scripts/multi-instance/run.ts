import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { freePort } from "../../engine/test/helpers/free-port";
// @ts-expect-error -- a plain ES module script without type declarations
import { engineWebhookAllow } from "../supervisor.mjs";
import { startTopology } from "./topology";

// Several Baton instances behind nginx, by hand:
//
//   bash scripts/postgres.sh                      # prints a postgres:// URL, or bring your own
//   npx next build                                # once: the instances run the production build
//   DATABASE_URL=postgres://… npx tsx scripts/multi-instance/run.ts [--instances 2] [--port 8080] [--engine URL]
//
// With --port P, nginx listens on 127.0.0.1:P and the instances on P+1, P+2, … (else free ports).
// Without --engine it starts the local engine too (its own data dir). Ctrl-C stops everything.

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const { values } = parseArgs({
  options: {
    instances: { type: "string", default: "2" },
    port: { type: "string" },
    engine: { type: "string" },
    dir: { type: "string" },
  },
});
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error("DATABASE_URL must name a PostgreSQL database (bash scripts/postgres.sh starts one)");
  process.exit(2);
}
const instances = Number(values.instances);
if (!Number.isInteger(instances) || instances < 1 || instances > 16) {
  console.error("--instances must be 1 to 16");
  process.exit(2);
}
const root = values.dir ? path.resolve(values.dir) : fs.mkdtempSync(path.join(os.tmpdir(), "baton-multi-"));
fs.mkdirSync(root, { recursive: true });

// Chosen before the engine starts: Baton's address (the balancer's) is the one webhook receiver the
// engine may deliver to on this machine (Receive in Baton), as `npm start` allows the console's.
const balancerPort = values.port ? Number(values.port) : await freePort();

/** The local engine on a port it picks, in its own data dir: its origin once it says it is ready. */
async function startEngine(): Promise<{ origin: string; dataDir: string; stop: () => void }> {
  const dataDir = path.join(root, "engine-data");
  const child = spawn(process.execPath, ["--import", "tsx", "engine/src/server.ts"], {
    cwd: ROOT,
    env: {
      ...process.env,
      BATON_DATA_DIR: dataDir,
      ORKESTR_ENGINE_PORT: "0",
      ORKESTR_ENGINE_WEBHOOK_ALLOW: engineWebhookAllow({
        ...process.env,
        BATON_URL: `http://127.0.0.1:${balancerPort}`,
      }),
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /"ready":true,"port":(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once("exit", (code) => reject(new Error(`the engine exited (${code}) during start`)));
  });
  return { origin: `http://127.0.0.1:${port}`, dataDir, stop: () => child.kill("SIGTERM") };
}

const engine = values.engine ? null : await startEngine();
const topology = await startTopology({
  databaseUrl,
  engineUrl: values.engine ?? engine!.origin,
  instances,
  balancerPort,
  instancePorts: values.port ? Array.from({ length: instances }, (_, i) => Number(values.port) + 1 + i) : undefined,
  root,
  onLine: (name, line) => console.log(`[${name}] ${line}`),
});

console.log(`\nBaton: ${topology.url} (nginx, ${topology.nginxPrefix}/nginx.conf)`);
for (const i of topology.instances) console.log(`  ${i.name}: 127.0.0.1:${i.port}, data dir ${i.dataDir}`);
if (engine) {
  console.log(`Engine: ${engine.origin}. An engine token for Settings → Connections (base URL ${engine.origin}):`);
  console.log(`  BATON_DATA_DIR=${engine.dataDir} npm run engine:token -- --scopes sandboxes:read,sandboxes:write`);
}
console.log("Ctrl-C stops everything.");

const shutdown = async () => {
  await topology.stop();
  engine?.stop();
  process.exit(0);
};
process.on("SIGINT", () => void shutdown());
process.on("SIGTERM", () => void shutdown());
