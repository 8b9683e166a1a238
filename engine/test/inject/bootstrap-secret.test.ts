import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildEngine } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";

/**
 * The admin routes compare X-Baton-Bootstrap with the engine's bootstrap secret. An empty secret
 * file (a truncated copy, an interrupted write) made the secret "", and an empty or missing header
 * matched it: the engine now refuses to start on a secret shorter than 32 characters.
 */
describe("the bootstrap secret", () => {
  it("an engine whose bootstrap.secret is empty does not start, and says what to do", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-bootstrap-"));
    try {
      fs.mkdirSync(path.join(dataDir, "engine"), { recursive: true });
      fs.writeFileSync(path.join(dataDir, "engine", "bootstrap.secret"), "\n", { mode: 0o600 });
      const config = loadConfig({
        PATH: process.env.PATH,
        BATON_DATA_DIR: dataDir,
        ORKESTR_ENGINE_LOG: "silent",
        ORKESTR_ENGINE_POOL_SIZE: "0",
      });
      await expect(buildEngine(config)).rejects.toThrow(/bootstrap\.secret holds too short a secret: delete it/);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
