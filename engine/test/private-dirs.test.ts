import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { prepareSandboxRoot, sandboxRootProblem } from "../src/runtime/sandbox-root.js";
import { createSandbox, exec, startEngine, type EngineHandle } from "./helpers/engine.js";

/**
 * An engine whose data dir (or whole checkout) sits below a 0700 directory, as a clone in root's
 * home does: bwrap runs as each sandbox's unprivileged uid and cannot pass through it, so the engine
 * must work from a bind of its tree in its own mount namespace (runtime/sandbox-root.ts), keep its
 * state in the data dir across restarts, and never loosen the 0700 directory itself.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const cleanup: string[] = [];
const engines: EngineHandle[] = [];

/** A fresh directory only root may enter, like /root. */
function privateParent(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-0700-"));
  fs.chmodSync(dir, 0o700);
  cleanup.push(dir);
  return dir;
}

async function start(opts: Parameters<typeof startEngine>[0]): Promise<EngineHandle> {
  const e = await startEngine({ ...opts, env: { ORKESTR_ENGINE_VOLUME_UNIT_MB: "32", ...opts?.env } });
  engines.push(e);
  return e;
}

afterAll(async () => {
  for (const e of engines) await e.stop();
  for (const dir of cleanup) fs.rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe("a data dir below a 0700 directory", () => {
  it("runs sandboxes, volumes and snapshots, and keeps them across a restart", async () => {
    const parent = privateParent();
    const dataDir = path.join(parent, "data");
    let e = await start({ dataDir });
    const target = e.log().match(/works from its bind mount at (\/run\/baton-engine\/[0-9a-f]{16}) /)?.[1];
    expect(target, e.log()).toBeDefined();
    expect(e.log()).not.toMatch(/degraded: .*not searchable|cannot reach/);

    const id = await createSandbox(e, { volume: "keep", network: "restricted" });
    expect((await exec(e, id, "echo ok")).stdout).toBe("ok\n");
    const put = await e.api("POST", `/sandboxes/${id}/files`, {
      path: "/workspace/note.txt",
      content: "written through the API\n",
      encoding: "utf8",
    });
    expect(put.status).toBe(201);
    const w = await exec(
      e,
      id,
      "cat /workspace/note.txt && echo persisted > /persist/v.txt && echo in-snapshot > /workspace/s.txt && id -u",
    );
    expect(w.stdout).toBe("written through the API\n1000\n");
    // The restricted relay (socat as the sandbox's uid) reaches the egress proxy's socket in the
    // sandbox's directory: a CONNECT to a host off the allowlist gets the proxy's 403.
    const proxied = await exec(
      e,
      id,
      "curl -s -o /dev/null -w '%{http_connect}' -x http://127.0.0.1:3128 https://denied.invalid/ ; true",
    );
    expect(proxied.stdout).toBe("403");
    const snap = await e.api("POST", `/sandboxes/${id}/snapshots`, { name: "kept" });
    expect(snap.status).toBe(201);
    expect((await e.api("DELETE", `/sandboxes/${id}`)).status).toBe(204);
    await e.stop();

    // The mount point on the host is gone with the engine (the bind itself only ever existed in
    // the engine's mount namespace).
    expect(fs.existsSync(target!)).toBe(false);
    // The 0700 directory was never loosened; everything lives in the data dir.
    expect(fs.statSync(parent).mode & 0o777).toBe(0o700);
    expect(fs.existsSync(path.join(dataDir, "engine", "engine.sqlite"))).toBe(true);

    e = await start({ dataDir });
    const fork = await e.api("POST", "/sandboxes", { snapshot: "kept", volume: "keep" });
    expect(fork.status, fork.text).toBe(201);
    const r = await exec(e, fork.body.id, "cat /workspace/s.txt /persist/v.txt");
    expect(r.stdout).toBe("in-snapshot\npersisted\n");
    expect((await e.api("DELETE", `/sandboxes/${fork.body.id}`)).status).toBe(204);
  }, 120_000);

  it("works when the whole checkout is below a 0700 directory (default ./data)", async () => {
    const parent = privateParent();
    const checkout = path.join(parent, "baton");
    // What a clone needs to run the engine: its source (with the lib/ modules it shares with the
    // console) and the installed packages.
    fs.mkdirSync(checkout);
    fs.cpSync(path.join(ROOT, "engine", "src"), path.join(checkout, "engine", "src"), { recursive: true });
    fs.cpSync(path.join(ROOT, "lib"), path.join(checkout, "lib"), { recursive: true });
    fs.copyFileSync(path.join(ROOT, "package.json"), path.join(checkout, "package.json"));
    fs.symlinkSync(fs.realpathSync(path.join(ROOT, "node_modules")), path.join(checkout, "node_modules"));
    const e = await start({ checkout, dataDir: path.join(checkout, "data") });
    const id = await createSandbox(e);
    const r = await exec(e, id, "echo ok > /workspace/x && cat /workspace/x && python3 -c 'print(2 + 2)'");
    expect(r.stdout).toBe("ok\n4\n");
    expect((await e.api("DELETE", `/sandboxes/${id}`)).status).toBe(204);
  }, 120_000);

  it("refuses to start with one sentence when the tree cannot be reached or moved", () => {
    const parent = privateParent();
    const config = loadConfig({ BATON_DATA_DIR: path.join(parent, "data"), ORKESTR_ENGINE_UID_BASE: "900000" });
    expect(sandboxRootProblem(parent, 899_999)).toMatch(
      new RegExp(`^sandbox uids cannot reach ${parent} \\(${parent} is mode 0700\\): set BATON_DATA_DIR`),
    );
    // Outside a private mount namespace a bind would leak onto the host: the engine stops instead.
    expect(() => prepareSandboxRoot(config, { inPrivateMountNs: false, log: () => undefined })).toThrow(
      /^sandbox uids cannot reach .*\/data\/engine \(.* is mode 0700\): set BATON_DATA_DIR to a directory every user can traverse .*; outside a private mount namespace/,
    );
    // A reachable data dir is used where it is.
    const open = fs.mkdtempSync(path.join(os.tmpdir(), "baton-open-"));
    cleanup.push(open);
    const ok = loadConfig({ BATON_DATA_DIR: open, ORKESTR_ENGINE_UID_BASE: "900000" });
    expect(prepareSandboxRoot(ok, { inPrivateMountNs: false, log: () => undefined }).root).toBe(
      path.join(open, "engine"),
    );
  });
});
