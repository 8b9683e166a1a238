// `npm start`: runs the local orkestr engine and, once the console exists in this checkout, the
// console beside it; Ctrl-C stops both. The engine cleans up its sandboxes on the way out.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";

const children = [];
function run(name, cmd, args, env = {}) {
  const child = spawn(cmd, args, { stdio: "inherit", env: { ...process.env, ...env } });
  child.on("exit", (code, signal) => {
    console.error(`[start] ${name} exited (${signal ?? code})`);
    for (const c of children) if (c !== child && c.exitCode === null) c.kill("SIGTERM");
    process.exitCode = code ?? 1;
  });
  children.push(child);
  return child;
}

run("engine", process.execPath, ["--import", "tsx", "engine/src/server.ts"]);
if (fs.existsSync("app") && fs.existsSync("next.config.ts")) {
  if (!fs.existsSync(".next/BUILD_ID")) {
    // A fresh checkout has no production build yet: make one (about 20 s on 2 cores).
    console.error("[start] building the console (next build)...");
    const build = spawnSync("npx", ["next", "build"], {
      stdio: "inherit",
      env: { NEXT_TELEMETRY_DISABLED: "1", ...process.env },
    });
    if (build.status !== 0) {
      console.error("[start] next build failed");
      for (const c of children) c.kill("SIGTERM");
      process.exit(1);
    }
  }
  const port = process.env.PORT ?? "3000";
  // Loopback by default: put a TLS proxy in front (or set HOST) to serve it beyond this machine.
  // Next's request handler plus the terminal WebSocket relay (what `next start` cannot do).
  run("console", process.execPath, ["scripts/console-server.mjs", "-H", process.env.HOST ?? "127.0.0.1", "-p", port], {
    NEXT_TELEMETRY_DISABLED: "1",
    NODE_ENV: "production",
  });
  console.error(`[start] Baton: http://localhost:${port} (the first visitor creates the owner account)`);
} else {
  const port = process.env.ORKESTR_ENGINE_PORT ?? "8787";
  console.error(`[start] the console is not in this checkout yet; the engine serves http://127.0.0.1:${port}/v1`);
  console.error("[start] mint a token with: npm run engine:token -- --scopes sandboxes:read,sandboxes:write");
}
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => children.forEach((c) => c.kill(sig)));
