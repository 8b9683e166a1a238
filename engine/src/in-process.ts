import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildEngine, type Engine } from "./app.js";
import { loadConfig } from "./config.js";
import { mintToken } from "./store/tokens.js";

export interface InProcessEngine {
  engine: Engine;
  /** A token with both scopes, of the default account. */
  token: string;
  close(): Promise<void>;
}

/**
 * The real engine (services, store, HTTP app) built inside this process on a fresh data dir, never
 * listening: requests go in through `engine.app.inject()`. Routes that only read and write the
 * store (validation, errors, auth, paging, webhooks, tokens) work as in a running engine; nothing
 * here starts a sandbox unless a request asks for one. Used by `npm run openapi` and the engine's
 * in-process tests (engine/test/inject/).
 */
export async function startInProcessEngine(env: Record<string, string> = {}): Promise<InProcessEngine> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-inproc-"));
  const config = loadConfig({
    PATH: process.env.PATH,
    BATON_DATA_DIR: dataDir,
    ORKESTR_ENGINE_LOG: "silent",
    ORKESTR_ENGINE_CHECK_RESPONSES: "1",
    // No warm pool unless a test asks: an in-process engine starts no sandbox nobody requested.
    ORKESTR_ENGINE_POOL_SIZE: "0",
    ...env,
  });
  const engine = await buildEngine(config);
  await engine.app.ready();
  const { token } = mintToken(engine.ctx.db, ["sandboxes:read", "sandboxes:write"], {});
  return {
    engine,
    token,
    async close() {
      await engine.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
