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
