import "server-only";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, vi } from "vitest";
import { startEngine, type EngineHandle } from "../../engine/test/helpers/engine";

/**
 * A real local engine as the console's embedded default: ORKESTR_API_URL points at it and its
 * bootstrap secret is in the console's BATON_DATA_DIR (as when both share one data dir).
 * `setup` is useConsoleDb: the engine starts before it (so the env it reads names the engine),
 * and the secret is copied after it (once the data dir exists).
 */
export function useLocalEngine<T>(setup: () => T): T & { engine(): EngineHandle } {
  let engine: EngineHandle;
  beforeAll(async () => {
    engine = await startEngine();
    vi.stubEnv("ORKESTR_API_URL", engine.origin);
  }, 60_000);
  const ctx = setup();
  beforeAll(() => {
    const dir = path.join(process.env.BATON_DATA_DIR!, "engine");
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "bootstrap.secret"), engine.bootstrap!, { mode: 0o600 });
  });
  afterAll(async () => {
    await engine?.stop();
    if (engine?.dataDir) fs.rmSync(engine.dataDir, { recursive: true, force: true });
  });
  return Object.assign(ctx as object, { engine: () => engine }) as T & { engine(): EngineHandle };
}
