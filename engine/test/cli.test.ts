import { execFileSync, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEngine, type EngineHandle } from "./helpers/engine.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
let e: EngineHandle;
beforeAll(async () => {
  e = await startEngine();
});
afterAll(async () => {
  await e?.stop();
});

describe("npm run engine:token", () => {
  it("prints a fresh ork_ token as its last line, usable against the running engine with exactly its scopes", async () => {
    const out = execFileSync("npm", ["run", "-s", "engine:token", "--", "--scopes", "sandboxes:read"], {
      cwd: ROOT,
      env: { ...process.env, BATON_DATA_DIR: e.dataDir! },
      encoding: "utf8",
    });
    const token = out.trim().split("\n").at(-1)!;
    expect(token).toMatch(/^ork_[A-Za-z0-9_-]{20,}$/);
    expect((await e.api("GET", "/sandboxes", undefined, { token })).status).toBe(200);
    expect((await e.api("POST", "/sandboxes", { template: "python-3.12" }, { token })).body.code).toBe(
      "insufficient_scope",
    );
  });

  it("refuses unknown scopes with a clear message and exit code 2", () => {
    const r = spawnSync("npm", ["run", "-s", "engine:token", "--", "--scopes", "sandboxes:admin"], {
      cwd: ROOT,
      env: { ...process.env, BATON_DATA_DIR: e.dataDir! },
      encoding: "utf8",
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/unknown scope\(s\): sandboxes:admin/);
  });
});
