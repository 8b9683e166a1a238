import type { EngineConfig } from "./config.js";
import type { Host } from "./runtime/host.js";
import type { EventLog } from "./services/events.js";
import type { Faults } from "./services/faults.js";
import type { Idempotency } from "./services/idempotency.js";
import type { SandboxService } from "./services/sandboxes.js";
import type { Db } from "./store/db.js";

/** What every route plugin gets: the engine's services, built once in buildApp. */
export interface EngineContext {
  config: EngineConfig;
  db: Db;
  host: Host;
  events: EventLog;
  sandboxes: SandboxService;
  faults: Faults;
  idempotency: Idempotency;
  /** Secret for presigned URLs (HMAC), generated once per data dir. */
  signingKey: Buffer;
  /** Guards the loopback admin routes (token minting, faults). */
  bootstrapSecret: string;
}
