import type { EngineConfig } from "./config.js";
import type { Host } from "./runtime/host.js";
import type { EventLog } from "./services/events.js";
import type { Faults } from "./services/faults.js";
import type { Idempotency } from "./services/idempotency.js";
import type { PreviewService } from "./services/previews.js";
import type { SandboxService } from "./services/sandboxes.js";
import type { SandboxStorage } from "./services/sandbox-storage.js";
import type { TemplateService } from "./services/templates.js";
import type { UsageLedger } from "./services/usage.js";
import type { WebhookService } from "./services/webhooks.js";
import type { Db } from "./store/db.js";

/** What every route plugin gets: the engine's services, built once in buildApp. */
export interface EngineContext {
  config: EngineConfig;
  db: Db;
  host: Host;
  events: EventLog;
  sandboxes: SandboxService;
  /** Named snapshots and volumes (contract §3.8, §3.9). */
  storage: SandboxStorage;
  /** Custom templates: builds, layers, logs (contract §3.10). */
  templates: TemplateService;
  faults: Faults;
  idempotency: Idempotency;
  /** Preview URLs: host → sandbox port, preview_auth, relays into sandboxes (contract §3.7). */
  previews: PreviewService;
  /** Subscriptions, signed deliveries and their log (contract §3.11). */
  webhooks: WebhookService;
  /** Metered usage per UTC day (contract §3.13); the same ledger draws down the trial credit. */
  usage: UsageLedger;
  /** Secret for presigned URLs (HMAC), generated once per data dir. */
  signingKey: Buffer;
  /** Guards the loopback admin routes (token minting, faults). */
  bootstrapSecret: string;
  /** Every route the app registered (method and URL pattern), for GET /_admin/routes. */
  routes: { method: string; url: string }[];
}
