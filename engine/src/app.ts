import type { FastifyInstance } from "fastify";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { EngineConfig } from "./config.js";
import type { EngineContext } from "./context.js";
import { buildApi } from "./api.js";
import { prepareHost } from "./runtime/host.js";
import { EventLog } from "./services/events.js";
import { Faults } from "./services/faults.js";
import { Idempotency } from "./services/idempotency.js";
import { SandboxService, PIDS_MAX } from "./services/sandboxes.js";
import { describeCapacity, HostAdmission } from "./services/admission.js";
import { PreviewService } from "./services/previews.js";
import { SandboxStorage } from "./services/sandbox-storage.js";
import { SnapshotService } from "./services/snapshots.js";
import { VolumeService } from "./services/volumes.js";
import { TemplateService } from "./services/templates.js";
import { WebhookService } from "./services/webhooks.js";
import { getMeta, openDb, setMeta } from "./store/db.js";

function loadSecret(file: string): string {
  try {
    return fs.readFileSync(file, "utf8").trim();
  } catch {
    const secret = randomBytes(32).toString("base64url");
    fs.writeFileSync(file, secret + "\n", { mode: 0o600 });
    return secret;
  }
}

export interface Engine {
  app: FastifyInstance;
  ctx: EngineContext;
  close(): Promise<void>;
}

export async function buildEngine(config: EngineConfig): Promise<Engine> {
  const log = (msg: string) => (config.logLevel === "silent" ? undefined : console.error(`[engine] ${msg}`));
  fs.mkdirSync(config.root, { recursive: true, mode: 0o711 });
  const db = openDb(config.root);
  const host = await prepareHost(config, log);
  const events = new EventLog(db);
  const sandboxes = new SandboxService(config, db, host, events);
  const failed = sandboxes.recoverAfterRestart();
  const templates = new TemplateService(config, db, host, events);
  // Sandboxes of a custom template bind its layer: they take and release a reference to it.
  sandboxes.templates = templates;
  const webhooks = new WebhookService(config, db, events, sandboxes, log);
  if (failed) log(`${failed} sandbox(es) from an earlier run marked failed: their processes died with it`);
  // After the webhook service exists, so a build failed by the restart is announced like any other.
  const builds = templates.recoverAfterRestart();
  if (builds.failed) log(`${builds.failed} template build(s) interrupted by the restart marked failed`);
  // Named snapshots and volumes. Recovered after the sandboxes: every holder died with the last run.
  const storage = new SandboxStorage(
    new SnapshotService(config, db, events, sandboxes, host.scratchTmpfs),
    new VolumeService(config, db, host, events, sandboxes.plan),
    db,
  );
  sandboxes.storage = storage;
  storage.snapshots.recover();
  await storage.volumes.recover();
  if (storage.volumes.backendNote)
    log(`  degraded: volumes are plain directories whose size is not enforced (${storage.volumes.backendNote})`);
  // The machine's own RAM, pids and disk, checked after every plan limit (services/admission.ts).
  const admission = new HostAdmission(
    config,
    db,
    {
      // pids.current only: admission runs on every create and resume, memory.stat is not needed there.
      sandboxThreads: (id) => sandboxes.process(id)?.cgroup.taskCount(),
      volumeData: (region, id) => ({
        path: storage.volumes.store.dataPath(region, id),
        image: storage.volumes.store.backend === "loop-ext4",
      }),
    },
    PIDS_MAX,
  );
  sandboxes.admission = storage.volumes.admission = templates.admission = admission;
  log(`  host capacity: ${describeCapacity(admission.capacity())}`);
  let signing = getMeta(db, "signing_key");
  if (!signing) {
    signing = randomBytes(32).toString("hex");
    setMeta(db, "signing_key", signing);
  }
  const previews = new PreviewService(config, db, sandboxes, events, Buffer.from(signing, "hex"));
  const ctx: EngineContext = {
    config,
    db,
    host,
    events,
    sandboxes,
    storage,
    templates,
    faults: new Faults(),
    idempotency: new Idempotency(db),
    previews,
    webhooks,
    usage: sandboxes.usage,
    signingKey: Buffer.from(signing, "hex"),
    bootstrapSecret: loadSecret(path.join(config.root, "bootstrap.secret")),
    routes: [],
  };

  const app = await buildApi(ctx, { checkResponses: config.checkResponses });

  sandboxes.startSampler();
  storage.volumes.startSweeper();
  templates.start();
  webhooks.start();
  return {
    app,
    ctx,
    async close() {
      await sandboxes.shutdown();
      // After the sandboxes (their volumes were unmounted as each was released): nothing stays mounted.
      await storage.volumes.close();
      // After the sandboxes (they hold the template views): stops a build, releases every overlay mount.
      await templates.shutdown();
      // After the sandboxes: their final events are queued (persisted) for the next run to send.
      await webhooks.close();
      await app.close();
      await host.close();
      db.close();
    },
  };
}
