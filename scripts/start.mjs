// `npm start`: runs the local orkestr engine and, once the console exists in this checkout, the
// console beside it, each under a supervisor (scripts/supervisor.mjs). When the engine crashes it is
// restarted with backoff (1 s doubling to 30 s, back to 1 s after a minute up) while the console
// stays up and shows the outage; the console is restarted the same way. Ctrl-C (SIGINT) or SIGTERM
// stops both cleanly (the engine cleans up its sandboxes on the way out); a second one kills them.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { engineWebhookAllow, restartPolicy, supervise } from "./supervisor.mjs";

const policy = restartPolicy();
const supervised = [];
const withConsole = fs.existsSync("app") && fs.existsSync("next.config.ts");

supervised.push(
  supervise({
    name: "engine",
    cmd: process.execPath,
    args: ["--import", "tsx", "engine/src/server.ts"],
    // The console's own receiver is the one internal webhook target the engine allows.
    env: withConsole ? { ...process.env, ORKESTR_ENGINE_WEBHOOK_ALLOW: engineWebhookAllow(process.env) } : process.env,
    policy,
  }),
);

if (withConsole) {
  if (!fs.existsSync(".next/BUILD_ID")) {
    // A fresh checkout has no production build yet: make one (about 20 s on 2 cores).
    console.error("[start] building the console (next build)...");
    const build = spawnSync("npx", ["next", "build"], {
      stdio: "inherit",
      env: { NEXT_TELEMETRY_DISABLED: "1", ...process.env },
    });
    if (build.status !== 0) {
      console.error("[start] next build failed");
      await Promise.all(supervised.map((s) => s.stop("SIGTERM")));
      process.exit(1);
    }
  }
  const port = process.env.PORT ?? "3000";
  // Loopback by default: put a TLS proxy in front (or set HOST) to serve it beyond this machine.
  // Next's request handler plus the terminal WebSocket relay (what `next start` cannot do).
  supervised.push(
    supervise({
      name: "console",
      cmd: process.execPath,
      args: ["scripts/console-server.mjs", "-H", process.env.HOST ?? "127.0.0.1", "-p", port],
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NODE_ENV: "production" },
      policy,
    }),
  );
  console.error(`[start] Baton: http://localhost:${port} (the first visitor creates the owner account)`);
} else {
  const port = process.env.ORKESTR_ENGINE_PORT ?? "8787";
  console.error(`[start] the console is not in this checkout yet; the engine serves http://127.0.0.1:${port}/v1`);
  console.error("[start] mint a token with: npm run engine:token -- --scopes sandboxes:read,sandboxes:write");
}

/** How long a clean stop may take before the children are killed (the engine stops its sandboxes). */
const STOP_GRACE_MS = 30_000;
let stopping = false;
for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, () => {
    if (stopping) {
      // A second Ctrl-C: the user does not want to wait.
      console.error(`[start] ${sig} again: killing`);
      for (const s of supervised) s.kill("SIGKILL");
      return;
    }
    stopping = true;
    console.error(`[start] ${sig}: stopping`);
    const killer = setTimeout(() => {
      console.error(`[start] still running after ${STOP_GRACE_MS / 1000} s: killing`);
      for (const s of supervised) s.kill("SIGKILL");
    }, STOP_GRACE_MS);
    killer.unref();
    void Promise.all(supervised.map((s) => s.stop(sig))).then(() => {
      console.error("[start] stopped");
      process.exit(0);
    });
  });
}
