import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, exec, startEngine, type EngineHandle } from "./helpers/engine.js";

let e: EngineHandle;
beforeAll(async () => {
  e = await startEngine();
});
afterAll(async () => {
  await e?.stop();
});

describe("smoke", () => {
  it("creates a sandbox and runs a command in it", async () => {
    const id = await createSandbox(e);
    const r = await exec(e, id, "echo hello; id -u");
    expect(r.stdout).toBe("hello\n1000\n");
    expect(r.exit_code).toBe(0);
  });
});

describe("the sandbox init", () => {
  it("survives kill -9 -1 from inside and reaps orphans", async () => {
    const id = await createSandbox(e);
    await exec(e, id, "for i in 1 2 3 4 5; do (sleep 0.1 &) ; done; sleep 0.5");
    const before = await exec(e, id, "ps -eo stat= | grep -c Z || true");
    expect(before.stdout.trim()).toBe("0");
    await exec(e, id, "kill -9 -1; true");
    const after = await exec(e, id, "echo alive; cat /proc/1/cmdline | tr '\\0' ' '");
    expect(after.stdout).toMatch(/^alive\n\/bin\/sh -c trap/);
    expect((await e.api("GET", `/sandboxes/${id}`)).body.status).toBe("running");
  });
});

describe("the host side of exec", () => {
  it("never applies the caller's environment to host processes (LD_PRELOAD stays inside)", async () => {
    const id = await createSandbox(e);
    // Inside the sandbox the file exists (invalid ELF); on the host the path does not exist at all.
    await exec(e, id, "printf 'not an elf' > /workspace/x.so");
    const r = await exec(e, id, "/bin/echo ran", { env: { LD_PRELOAD: "/workspace/x.so" } });
    expect(r.stdout).toBe("ran\n");
    expect(r.stderr).toMatch(/invalid ELF header|file too short/);
    expect(r.stderr).not.toMatch(/cannot open shared object file/);
  });

  it("gives a command exactly the sandbox's environment plus its own, nothing of the host helpers", async () => {
    const id = await createSandbox(e, { env: { CREATED_WITH: "1" } });
    const r = await exec(e, id, "env | cut -d= -f1 | sort | tr '\\n' ' '", { env: { PER_EXEC: "2" } });
    expect(r.stdout.trim().split(" ")).toEqual([
      "CREATED_WITH",
      "HOME",
      "LANG",
      "OLDPWD",
      "ORKESTR_EXEC_ID",
      "ORKESTR_SANDBOX_ID",
      "PATH",
      "PER_EXEC",
      "PWD",
      "PYTHONUNBUFFERED",
      "TERM",
    ]);
  });

  it("passes no inherited descriptors into the sandbox", async () => {
    const id = await createSandbox(e);
    const r = await exec(e, id, "ls /proc/self/fd | sort -n | tr '\\n' ' '");
    // 0-2 plus the fd ls itself opens to read the directory.
    expect(
      r.stdout
        .trim()
        .split(" ")
        .map(Number)
        .filter((fd) => fd > 3),
    ).toEqual([]);
  });
});
