// `npm start`: runs the local orkestr engine and, once the console exists in this checkout, the
// console beside it; Ctrl-C stops both. The engine cleans up its sandboxes on the way out.
import { spawn } from "node:child_process";
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
  run("console", "npx", ["next", "start", "-p", process.env.PORT ?? "3000"]);
} else {
  const port = process.env.ORKESTR_ENGINE_PORT ?? "8787";
  console.error(`[start] the console is not in this checkout yet; the engine serves http://127.0.0.1:${port}/v1`);
  console.error("[start] mint a token with: npm run engine:token -- --scopes sandboxes:read,sandboxes:write");
}
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => children.forEach((c) => c.kill(sig)));
