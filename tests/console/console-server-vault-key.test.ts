import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../../engine/test/helpers/free-port";

// Two console servers on one database (a second instance behind a balancer), the second with
// another vault key: it must not start, and must say why. With the same key it starts. The real
// scripts/console-server.mjs with the stand-in for Next (tests/helpers/next-stub/), as in
// console-server.test.ts: the check runs before Next would serve anything.

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SERVER = path.join(ROOT, "scripts", "console-server.mjs");
const STUB = path.join(ROOT, "tests", "helpers", "next-stub", "register.mjs");

const shared = fs.mkdtempSync(path.join(os.tmpdir(), "baton-two-instances-"));
const DATABASE_URL = `sqlite:${path.join(shared, "baton.sqlite")}`;
afterAll(() => fs.rmSync(shared, { recursive: true, force: true }));

/** Starts an instance (its own data dir); "ready" once it listens (then stops it), else its exit code and output. */
async function startInstance(secret: string | undefined): Promise<{ result: "ready" | number | null; log: string }> {
  const dataDir = fs.mkdtempSync(path.join(shared, "data-"));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: "production",
    BATON_DATA_DIR: dataDir,
    DATABASE_URL,
    ...(secret ? { BATON_SECRET: secret } : {}),
  };
  const port = await freePort();
  const child = spawn(process.execPath, ["--import", STUB, SERVER, "-p", String(port), "-H", "127.0.0.1"], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  const result = await new Promise<"ready" | number | null>((resolve) => {
    const check = setInterval(() => {
      if (/Ready in/.test(out)) resolve("ready");
    }, 25);
    child.on("exit", (code) => {
      clearInterval(check);
      resolve(code);
    });
  });
  if (child.exitCode === null) {
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
  }
  return { result, log: out };
}

describe("a second console instance on the same database", () => {
  it("starts with the same BATON_SECRET; with a key of its own it exits, naming BATON_SECRET", async () => {
    expect((await startInstance("a".repeat(48))).result).toBe("ready");
    expect((await startInstance("a".repeat(48))).result).toBe("ready");
    // No BATON_SECRET: a secret.key generated into its own data dir, not the database's key.
    const other = await startInstance(undefined);
    expect(other.result).toBe(1);
    expect(other.log).toMatch(/different vault key .* same BATON_SECRET/);
    expect(other.log).not.toMatch(/Ready in/);
  });
});
