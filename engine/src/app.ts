import type { FastifyInstance } from "fastify";
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { EngineConfig } from "./config.js";
import type { EngineContext } from "./context.js";
import { buildApi } from "./api.js";
import { prepareHost } from "./runtime/host.js";
import { EventLog } from "./services/events.js";
import { Faults } from "./services/faults.js";
import { Idempotency, Sealer } from "./services/idempotency.js";
import { SandboxService, PIDS_MAX } from "./services/sandboxes.js";
import { describeCapacity, HostAdmission } from "./services/admission.js";
import { PreviewService } from "./services/previews.js";
import { LiveSandboxes } from "./services/sandboxes/live.js";
import { planFor } from "./services/sandboxes/plan-admission.js";
import { SandboxStorage } from "./services/sandbox-storage.js";
import { SnapshotService } from "./services/snapshots.js";
import { StreamLeases } from "./services/stream-leases.js";
import { openVolumeStore, VolumeService } from "./services/volumes.js";
import { TemplateService } from "./services/templates.js";
import { WebhookService } from "./services/webhooks.js";
import type { WarmPool } from "./services/warm-pool.js";
import { getMeta, openDb, setMeta } from "./store/db.js";

/**
 * A secret file's contents, made on first use (0600). A file that holds too short a secret (an
 * empty one: an interrupted write, a truncated copy) stops the engine at start: an empty
 * bootstrap secret would let an empty X-Baton-Bootstrap header through to the admin routes.
 */
function loadSecret(file: string): string {
  let secret: string;
  try {
    secret = fs.readFileSync(file, "utf8").trim();
  } catch {
    secret = randomBytes(32).toString("base64url");
    fs.writeFileSync(file, secret + "\n", { mode: 0o600 });
  }
  if (secret.length < 32) throw new Error(`${file} holds too short a secret: delete it and the engine makes a new one`);
  return secret;
}

/** A 32-byte key derived from a secret file (made on first use, 0600). */
function fileKey(file: string): Buffer {
  return createHash("sha256")
    .update(`baton-engine-key\n${loadSecret(file)}`)
    .digest();
}

export interface Engine {
  app: FastifyInstance;
  ctx: EngineContext;
  close(opts?: { keepSandboxes?: boolean }): Promise<void>;
}

/**
 * The warm pool refills only once the API is quiet (services/warm-pool.ts): every request is
 * bracketed, once, whether it completes or the client goes away.
 */
function watchRequestsForPool(app: FastifyInstance, pool: WarmPool): void {
  const open = new WeakSet<object>();
  const end = (req: object) => {
    if (open.delete(req)) pool.requestEnded();
  };
  app.addHook("onRequest", (req, _reply, done) => {
    open.add(req);
    pool.requestStarted();
    done();
  });
  app.addHook("onResponse", (req, _reply, done) => {
    end(req);
    done();
  });
  app.addHook("onRequestAbort", (req, done) => {
    end(req);
    done();
  });
}

export async function buildEngine(config: EngineConfig): Promise<Engine> {
  const log = (msg: string) => (config.logLevel === "silent" ? undefined : console.error(`[engine] ${msg}`));
  fs.mkdirSync(config.root, { recursive: true, mode: 0o711 });
  const db = openDb(config.root);
  const host = await prepareHost(config, log);
  const events = new EventLog(db);
  // Built in dependency order, each with what it needs. The pieces two services share are built
  // first: the live-sandbox registry and the volume store (host admission reads both).
  const plan = planFor(config);
  const live = new LiveSandboxes();
  const volumeStore = openVolumeStore(config, host);
  // The machine's own RAM, pids and disk, checked after every plan limit (services/admission.ts).
  const admission: HostAdmission = new HostAdmission(
    config,
    db,
    {
      // pids.current only: admission runs on every create and resume, memory.stat is not needed there.
      sandboxThreads: (id) => live.process(id)?.cgroup.taskCount(),
      volumeData: (region, id) => ({
        path: volumeStore.store.dataPath(region, id),
        image: volumeStore.store.backend === "loop-ext4",
      }),
      // Warm-pool members are real sandboxes on this machine: their memory, pids.max and threads count.
      pooled: () => sandboxes.pool.commitment(),
    },
    PIDS_MAX,
  );
  const templates = new TemplateService(config, db, host, events, admission);
  const volumes = new VolumeService(config, db, events, plan, volumeStore, admission);
  // Sandboxes of a custom template bind its layer; snapshots need running sandboxes, which fork them.
  const sandboxes: SandboxService = new SandboxService({
    config,
    db,
    host,
    events,
    plan,
    live,
    admission,
    templates,
    storage: (s) =>
      new SandboxStorage(new SnapshotService(config, db, events, s, host.scratchTmpfs, admission), volumes, db),
  });
  const { storage } = sandboxes;
  const { adopted, failed } = await sandboxes.adoptAfterRestart();
  const webhooks = new WebhookService(config, db, events, sandboxes, log);
  if (adopted) log(`${adopted} sandbox(es) of an earlier run adopted: they kept running across the restart`);
  if (failed) log(`${failed} sandbox(es) from an earlier run marked failed (see each status_reason)`);
  // After the webhook service exists, so a build failed by the restart is announced like any other.
  const builds = templates.recoverAfterRestart();
  if (builds.failed) log(`${builds.failed} template build(s) interrupted by the restart marked failed`);
  // Named snapshots and volumes. Recovered after the sandboxes: every holder died with the last run.
  storage.snapshots.recover();
  await storage.volumes.recover();
  if (storage.volumes.backendNote)
    log(`  degraded: volumes are plain directories whose size is not enforced (${storage.volumes.backendNote})`);
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
    streams: new StreamLeases(db, config.streams),
    // Its key lives in a file of its own, never in the database the sealed values are in.
    idempotency: new Idempotency(db, new Sealer(fileKey(path.join(config.root, "idempotency.key")))),
    previews,
    webhooks,
    usage: sandboxes.usage,
    signingKey: Buffer.from(signing, "hex"),
    bootstrapSecret: loadSecret(path.join(config.root, "bootstrap.secret")),
    routes: [],
  };

  const app = await buildApi(ctx, { checkResponses: config.checkResponses });
  watchRequestsForPool(app, sandboxes.pool);

  sandboxes.startSampler();
  const leftovers = await sandboxes.startPool();
  if (leftovers) log(`${leftovers} warm-pool sandbox(es) of an earlier run ended (pool members are never re-adopted)`);
  storage.volumes.startSweeper();
  templates.start();
  webhooks.start();
  return {
    app,
    ctx,
    /** `keepSandboxes`: an upgrade stop (server.ts SIGUSR2); adoptable sandboxes keep running. */
    async close(opts: { keepSandboxes?: boolean } = {}) {
      await sandboxes.shutdown({ keep: opts.keepSandboxes });
      // After the sandboxes (their volumes were unmounted as each was released): nothing stays
      // mounted but what the sandboxes an upgrade stop keeps run on.
      await storage.volumes.close({ keepAttached: opts.keepSandboxes });
      // After the sandboxes (they hold the template views): stops a build, releases every overlay
      // mount but the kept sandboxes' views.
      await templates.shutdown({ keep: opts.keepSandboxes });
      // After the sandboxes: their final events are queued (persisted) for the next run to send.
      await webhooks.close();
      ctx.streams.close();
      await app.close();
      await host.close({ keepSandboxes: opts.keepSandboxes });
      db.close();
    },
  };
}
