import type { EngineConfig } from "./config.js";
import type { Host } from "./runtime/host.js";
import type { EventLog } from "./services/events.js";
import type { Faults } from "./services/faults.js";
import type { Idempotency } from "./services/idempotency.js";
import type { PreviewService } from "./services/previews.js";
import type { SandboxService } from "./services/sandboxes.js";
import type { SandboxStorage } from "./services/sandbox-storage.js";
import type { StreamLeases } from "./services/stream-leases.js";
import type { TemplateService } from "./services/templates.js";
import type { UsageLedger } from "./services/usage.js";
import type { WebhookService } from "./services/webhooks.js";
import type { Db } from "./store/db.js";

/** What every route plugin gets: the engine's services, built once in buildEngine. */
export interface EngineContext {
  config: EngineConfig;
  db: Db;
  host: Host;
  events: EventLog;
  sandboxes: SandboxService;
  /** Named snapshots and volumes (/v1/snapshots, /v1/volumes). */
  storage: SandboxStorage;
  /** Custom templates: builds, layers, logs (/v1/templates). */
  templates: TemplateService;
  faults: Faults;
  /** Open streams: the per-token and per-account caps, and their end when their token is revoked. */
  streams: StreamLeases;
  idempotency: Idempotency;
  /** Preview URLs: host → sandbox port, preview_auth, relays into sandboxes (GET /v1/sandboxes/:id/previews/:port). */
  previews: PreviewService;
  /** Subscriptions, signed deliveries and their log (/v1/webhooks). */
  webhooks: WebhookService;
  /** Metered usage per UTC day (GET /v1/sandboxes/usage); the same ledger draws down the trial credit. */
  usage: UsageLedger;
  /** Secret for presigned URLs (HMAC), generated once per data dir. */
  signingKey: Buffer;
  /** Guards the loopback admin routes (token minting, faults). */
  bootstrapSecret: string;
  /** Every route the app registered (method and URL pattern), for GET /_admin/routes. */
  routes: { method: string; url: string }[];
}
