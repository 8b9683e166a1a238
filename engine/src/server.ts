import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { loadConfig } from "./config.js";
import { buildEngine } from "./app.js";
import { CLOSE_FDS } from "./runtime/sandbox-command.js";
import { prepareSandboxRoot } from "./runtime/sandbox-root.js";
import { holderMountNamespace } from "./runtime/holder.js";

/**
 * Entry point: `npm run engine`. As root it first re-executes itself in a private mount namespace
 * (unshare --mount --propagation private), so the runtime bind mounts it makes vanish with it and
 * never leak onto the host.
 *
 * Sandboxes outlive the engine (runtime/holder.ts), and their holders keep that namespace alive
 * with its mounts (each sandbox's scratch tmpfs, the data dir's bind): a restarted engine whose data
 * dir still has a live holder joins the holder's namespace (nsenter) instead of making a new one,
 * so it sees every adopted sandbox's files where the earlier process left them.
 */
async function main(): Promise<void> {
  const isRoot = process.getuid?.() === 0;
  if (isRoot && process.env.BATON_ENGINE_IN_MNTNS !== "1" && spawnSync("unshare", ["--version"]).status === 0) {
    const self = fileURLToPath(import.meta.url);
    const shared = holderMountNamespace(loadConfig().root);
    const enterNs = shared
      ? ["nsenter", `--mount=${shared}`, `--wd=${process.cwd()}`, "--"]
      : ["unshare", "--mount", "--propagation", "private", "--"];
    // setpriv --pdeathsig: if this launcher dies, even by SIGKILL, the engine gets SIGTERM and cleans up.
    // bash closes descriptors this process inherited without close-on-exec, so none of them can
    // travel on into sandboxes.
    const child = spawn(
      "bash",
      [
        "-c",
        CLOSE_FDS,
        "baton-engine",
        "setpriv",
        "--pdeathsig",
        "TERM",
        "--",
        ...enterNs,
        process.execPath,
        ...process.execArgv,
        self,
        ...process.argv.slice(2),
      ],
      {
        stdio: "inherit",
        env: { ...process.env, BATON_ENGINE_IN_MNTNS: "1" },
      },
    );
    for (const sig of ["SIGINT", "SIGTERM", "SIGHUP", "SIGUSR2"] as const) process.on(sig, () => child.kill(sig));
    child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 + 15 : 1)));
    return;
  }

  // Whoever reads the engine's log may go away (a test runner that died, a closed terminal): a
  // write to that pipe must not crash the engine in the middle of a shutdown, which would leave
  // sandboxes running (they outlive the engine) with nobody to terminate them.
  for (const stream of [process.stdout, process.stderr]) stream.on("error", () => undefined);
  // A backstop: a stray rejection is logged, never allowed to take every sandbox down with the engine.
  process.on("unhandledRejection", (e) =>
    console.error(`[engine] unhandled rejection: ${(e as Error)?.stack ?? String(e)}`),
  );
  const config = loadConfig();
  // Sandbox uids must reach the engine's tree: where the data dir sits below a directory they
  // cannot search (a checkout in /root), the engine works from a bind of it (runtime/sandbox-root.ts).
  const sandboxRoot = prepareSandboxRoot(config, {
    inPrivateMountNs: process.env.BATON_ENGINE_IN_MNTNS === "1",
    log: (m) => (config.logLevel === "silent" ? undefined : console.error(`[engine] ${m}`)),
  });
  config.root = sandboxRoot.root;
  const engine = await buildEngine(config);
  await engine.app.listen({ port: config.port, host: config.host });
  const addr = engine.app.server.address();
  const port = typeof addr === "object" && addr ? addr.port : config.port;
  console.error(
    `[engine] orkestr v1 engine listening on http://${config.host}:${port}/v1 (plan ${config.plan}, data ${config.dataDir})`,
  );
  // A line tests and the launcher wait for.
  console.log(JSON.stringify({ ready: true, port, pid: process.pid }));

  // SIGTERM, SIGINT (npm start's Ctrl-C) and SIGHUP stop everything: sandboxes are terminated and
  // nothing is left behind, which is what tests, CI and a developer at a terminal expect. SIGUSR2
  // stops the engine for an upgrade: sandboxes keep running under their holders and the next
  // engine on this data dir adopts them (as after a crash, which keeps them too).
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    const keep = signal === "SIGUSR2";
    console.error(
      `[engine] ${signal}: ${keep ? "stopping; sandboxes keep running for the next engine" : "terminating sandboxes and cleaning up"}`,
    );
    const force = setTimeout(() => process.exit(1), 20_000);
    force.unref();
    try {
      await engine.close({ keepSandboxes: keep });
      sandboxRoot.release();
      process.exit(0);
    } catch (e) {
      console.error(`[engine] shutdown failed: ${(e as Error).message}`);
      process.exit(1);
    }
  };
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP", "SIGUSR2"] as const) process.on(sig, () => void shutdown(sig));
}

main().catch((e: Error) => {
  console.error(`[engine] failed to start: ${e.message}`);
  process.exit(1);
});
