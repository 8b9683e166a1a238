import { createHash } from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import type { EngineConfig } from "../config.js";
import { ApiError } from "../errors.js";
import { newId, newSecret } from "../lib/ids.js";
import { previewHostBase } from "../lib/preview-host.js";
import { REGIONS, DEFAULT_EGRESS_DOMAINS, type Plan } from "../plans.js";
import type { Host } from "../runtime/host.js";
import { createSandboxDirs, removeSandboxDirs, SandboxProcess } from "../runtime/sandbox-proc.js";
import { adoptNetwork, proxyEnv, startNetwork } from "../runtime/network.js";
import { killHolder, listRecords, unmountLeftovers } from "../runtime/holder.js";
import { fastMigrationDir } from "../runtime/cgroups/fast-migration.js";
import { TEMPLATE_ALIASES } from "../runtime/templates.js";
import type { CreateSandboxBody } from "../schemas.js";
import type { Db } from "../store/db.js";
import type { HostAdmission } from "./admission.js";
import type { EventLog } from "./events.js";
import type { TemplateService } from "./templates.js";
import { SandboxMeter } from "./metrics.js";
import type { SandboxStorage } from "./sandbox-storage.js";
import { UsageLedger } from "./usage.js";
import type { Live, LiveSandboxes } from "./sandboxes/live.js";
import { PlanAdmission } from "./sandboxes/plan-admission.js";
import { GONE, SandboxRepository, type SandboxFilter, type SandboxRow } from "./sandboxes/repository.js";
import { UsageSampler } from "./sandboxes/sampler.js";
import { sandboxView, type SandboxView } from "./sandboxes/view.js";
import { allocateUid } from "./sandboxes/uid-pool.js";
import {
  bootPoolMember,
  destroyPoolMember,
  forgetPoolMember,
  POOL_SHAPE,
  rememberPoolMember,
  sweepPoolLeftovers,
  type PoolRuntime,
} from "./sandboxes/pool-boot.js";
import { WarmPool, type PoolMember } from "./warm-pool.js";
import { checkSandbox } from "./admission.js";

export type { SandboxRow, SandboxStatus } from "./sandboxes/repository.js";
export type { SandboxView } from "./sandboxes/view.js";

/** pids.max of every sandbox (host admission reserves it per live or paused sandbox). */
export const PIDS_MAX = 1024;

/** What the sandbox service is built with (app.ts builds each piece once, in dependency order). */
export interface SandboxDeps {
  config: EngineConfig;
  db: Db;
  host: Host;
  events: EventLog;
  /** The engine's plan (sandboxes/plan-admission.ts planFor). */
  plan: Plan;
  /** Sandboxes whose processes exist; shared with host admission, which counts their threads. */
  live: LiveSandboxes;
  /** The machine's capacity (services/admission.ts), checked after the plan's. */
  admission: HostAdmission;
  /** Custom templates: resolved at create, their layer held while a sandbox runs. */
  templates: Pick<TemplateService, "forSandbox" | "acquire" | "releaseFor" | "adoptUser" | "viewRootsInUse">;
  /**
   * Named snapshots and volumes, made from this service: taking a snapshot needs a running sandbox
   * (a lookup, its lock, auto-resume), and creating a sandbox forks a snapshot and mounts a volume.
   * The cycle is broken here, by a factory called once at construction, instead of a field set later.
   */
  storage: (sandboxes: SandboxService) => SandboxStorage;
}

/**
 * The sandbox lifecycle: create, countdown, pause, resume, terminate, failure and shutdown, one
 * transition at a time per sandbox. The pieces with one job each live in services/sandboxes/: the
 * table (repository.ts), the plan's limits (plan-admission.ts), uids (uid-pool.ts), the live
 * registry (live.ts), the usage sampler (sampler.ts) and the API object (view.ts).
 */
export class SandboxService {
  readonly plan: Plan;
  /** Books metered usage per UTC day; the usage report and the trial-credit gate read it. */
  readonly usage: UsageLedger;
  /** The machine's capacity (services/admission.ts), checked after the plan's; the limits route reads it. */
  readonly admission: HostAdmission;
  /** Named snapshots and volumes (services/sandbox-storage.ts). */
  readonly storage: SandboxStorage;
  /**
   * Booted sandboxes no account owns yet (services/warm-pool.ts): a create that matches them takes
   * one instead of booting. They have no row, so no list, usage report, limit or admin route of any
   * account sees them; host admission counts them (app.ts wires it).
   */
  readonly pool: WarmPool;
  private readonly config: EngineConfig;
  private readonly host: Host;
  private readonly events: EventLog;
  private readonly templates: SandboxDeps["templates"];
  private readonly live: LiveSandboxes;
  private readonly repo: SandboxRepository;
  private readonly limits: PlanAdmission;
  private readonly sampler: UsageSampler;
  /** Sandboxes still booting: settled when their create finishes either way. */
  private creating = new Map<string, Promise<void>>();
  private closing = false;
  /** Set by a shutdown that keeps sandboxes running (an upgrade stop): terminals keep theirs too. */
  keepingSandboxes = false;
  /** Run once a sandbox's processes are gone (terminate, expiry, failure, shutdown): previews drop their relays. */
  private releaseHooks: ((id: string) => Promise<void>)[] = [];

  constructor(deps: SandboxDeps) {
    this.config = deps.config;
    this.host = deps.host;
    this.events = deps.events;
    this.plan = deps.plan;
    this.live = deps.live;
    this.admission = deps.admission;
    this.templates = deps.templates;
    this.repo = new SandboxRepository(deps.db);
    this.usage = new UsageLedger(deps.db, () => this.live.meters());
    this.limits = new PlanAdmission(this.plan, this.repo, this.usage);
    this.sampler = new UsageSampler(this.live, this.repo, this.usage, this.config.sampleMs);
    this.storage = deps.storage(this);
    this.pool = this.buildPool();
  }

  /** The pool's templates are built-in images that run here; a custom template is never pooled. */
  private buildPool(): WarmPool {
    const usable = this.host.isolation.mode !== "unavailable";
    const templates: string[] = [];
    for (const name of this.config.poolTemplates) {
      const id = TEMPLATE_ALIASES[name] ?? name;
      if (this.host.images.get(id)?.available) templates.push(id);
      else if (usable && this.config.poolSize > 0)
        console.error(`[engine] warm pool: template "${name}" is not a built-in image that runs here; not pooled`);
    }
    const rt: PoolRuntime = {
      config: this.config,
      host: this.host,
      pidsMax: PIDS_MAX,
      scratch: this.scratchFor(POOL_SHAPE.memory_mb),
    };
    return new WarmPool(usable ? this.config.poolSize : 0, [...new Set(templates)], POOL_SHAPE.memory_mb, {
      boot: (spec) => bootPoolMember(rt, spec),
      destroy: (m) => destroyPoolMember(rt, m),
      allocateUid: () => this.freeUid(),
      hasRoom: () => !checkSandbox(this.admission.capacity(), { memoryMb: POOL_SHAPE.memory_mb, pidsMax: PIDS_MAX }),
      remember: (key, uid, pid) => rememberPoolMember(this.config, key, uid, pid),
      forget: (key) => forgetPoolMember(this.config, key),
      log: (m) => (this.config.logLevel === "silent" ? undefined : console.error(`[engine] ${m}`)),
    });
  }

  /**
   * At engine start, after boot reconciliation: ends the pool members an earlier run left (they
   * are never re-adopted) and starts filling the pool. Returns how many leftovers were ended.
   */
  async startPool(): Promise<number> {
    const leftovers = await sweepPoolLeftovers(this.config, this.host.scratchTmpfs);
    this.pool.start();
    return leftovers;
  }

  /** A uid no sandbox holds: live ones, rows that may still have processes, and pool members. */
  private freeUid(): number {
    return allocateUid(this.host.uidBase, [...this.live.uids(), ...this.repo.heldUids(), ...this.pool.uids()]);
  }

  /**
   * Boot reconciliation. Sandboxes outlive the engine process (runtime/holder.ts): every running
   * or paused sandbox whose holder still runs is adopted, with its cgroups, uid, network helpers
   * and countdown; the rest are marked failed with the reason (never dropped) and whatever they
   * left (processes in their cgroups, a holder, scratch) is removed. Groups and holders of this
   * data dir that no row claims any more are reaped too.
   */
  async adoptAfterRestart(): Promise<{ adopted: number; failed: number }> {
    const now = Date.now();
    let adopted = 0;
    let failed = 0;
    const kept = new Set<string>();
    // Mounts adopted sandboxes still run on besides their own directory: a custom template's view,
    // a volume's image.
    const keptMounts: string[] = [];
    for (const s of this.repo.notEnded()) {
      const row = this.rowById(s.id);
      let reason = `engine restarted while the sandbox was ${s.status}; its processes no longer exist`;
      if (s.status === "running" || s.status === "paused") {
        const why = this.notAdoptable();
        if (why) reason = `engine restarted while the sandbox was ${s.status}; ${why}`;
        else {
          try {
            keptMounts.push(...(await this.adopt(row)));
            kept.add(row.id).add(this.keyOf(row.id));
            adopted++;
            continue;
          } catch (e) {
            reason = `engine restarted while the sandbox was ${s.status}, and ${(e as Error).message}`;
          }
        }
      }
      await this.reapLeftovers(row.id);
      this.repo.markFailed(row.id, reason, now);
      this.events.record(row.id, "sandbox.failed", { reason: "engine_restart", previous_status: s.status });
      failed++;
    }
    for (const id of this.host.cgroups.existing()) if (!kept.has(id)) await this.reapLeftovers(id);
    if (this.host.holder)
      for (const rec of listRecords(this.host.holder.root)) if (!kept.has(rec.id)) await this.reapLeftovers(rec.id);
    unmountLeftovers(this.config.root, [
      ...[...kept].map((id) => this.sandboxDir(id)),
      ...keptMounts,
      // Not a leftover: this run's (runtime/cgroups/fast-migration.ts), mounted before adoption.
      fastMigrationDir(this.config.root),
    ]);
    return { adopted, failed };
  }

  /** Why a sandbox cannot be adopted, or null. */
  private notAdoptable(): string | null {
    if (!this.host.holder) return "sandboxes run without holders on this machine, so they die with the engine";
    return null;
  }

  /**
   * The name a sandbox's processes, cgroups and holder record go by: its id, or for a claimed pool
   * member the pool key it was booted under (its directory is linked from the id at claim).
   */
  private keyOf(id: string): string {
    try {
      return path.basename(fs.readlinkSync(path.join(this.config.root, "sbx", id)));
    } catch {
      return id;
    }
  }

  /**
   * Takes a running or paused sandbox of the previous run back; returns the mounts outside its own
   * directory that it runs on (a custom template's view, a volume), which the restart keeps.
   */
  private async adopt(row: SandboxRow): Promise<string[]> {
    const key = this.keyOf(row.id);
    const cgroup = this.host.cgroups.adopt(key);
    if (!cgroup) throw new Error("its cgroups are gone");
    const proc = await SandboxProcess.adopt(this.host, key, cgroup);
    // Its scratch tmpfs lives in the mount namespace the holders keep (server.ts joins it): an
    // engine that did not get in there would see an empty directory instead of its files.
    if (this.host.scratchTmpfs && !isMountPoint(proc.spec.dir)) {
      await proc.kill();
      throw new Error("its files are not visible in this engine's mount namespace");
    }
    // What it runs on besides its own directory is still mounted in that namespace too: the
    // services that count their users take it back, or the sandbox cannot be kept.
    const mounts: string[] = [];
    try {
      if (!this.host.images.has(TEMPLATE_ALIASES[row.template] ?? row.template)) {
        await this.templates.adoptUser(row.id, row.template);
        mounts.push(...this.templates.viewRootsInUse());
      }
      if (row.volume_id) mounts.push(this.storage.volumes.adoptAttachment(row.volume_id, row.id));
    } catch (e) {
      await this.templates.releaseFor(row.id).catch(() => undefined);
      await proc.kill();
      throw e;
    }
    const allow = row.allow_domains ? (JSON.parse(row.allow_domains) as string[]) : null;
    let network;
    try {
      network = await adoptNetwork(
        this.host,
        proc,
        row.network,
        allow ?? DEFAULT_EGRESS_DOMAINS,
        this.config,
        row.status === "paused",
      );
    } catch (e) {
      await proc.kill();
      throw new Error(`its network could not be restored (${(e as Error).message})`);
    }
    // The cgroup's CPU counter runs since the sandbox started, so it is the lifetime total itself;
    // GiB-seconds are integrated by the meter and continue from what was persisted.
    const meter = new SandboxMeter(row.cpu, Math.ceil(3_600_000 / this.config.sampleMs), {
      cpu_seconds: 0,
      gb_seconds: row.gb_seconds,
    });
    const live: Live = { proc, meter, network, timer: null, env: proc.spec.env, lock: Promise.resolve() };
    this.live.set(row.id, live);
    proc.onExit((reason) => void this.onProcessDied(row.id, reason));
    if (row.status === "running") {
      meter.sample(cgroup, Date.now());
      this.armTimer(row.id);
    }
    this.events.record(row.id, "sandbox.adopted", { status: row.status });
    return mounts;
  }

  /** Kills and removes whatever a sandbox that is not adopted left behind. */
  private async reapLeftovers(id: string): Promise<void> {
    const cgroup = this.host.cgroups.adopt(id);
    if (cgroup) await cgroup.destroy().catch(() => undefined);
    if (this.host.holder) await killHolder(this.host.holder.root, id);
    await removeSandboxDirs(this.sandboxDir(id), this.host.scratchTmpfs);
  }

  startSampler(): void {
    this.sampler.start();
  }

  /**
   * A sandbox of `account`. Another account's sandbox is exactly as unknown as one that never
   * existed: the same lookup, the same 404.
   */
  row(account: string, id: string): SandboxRow | undefined {
    return this.repo.row(account, id);
  }

  getRow(account: string, id: string): SandboxRow {
    return this.repo.getRow(account, id);
  }

  /**
   * Any account's sandbox, by exact id: only for the engine's own work (timers, the sampler,
   * webhooks) and for preview hosts, whose URL names the sandbox itself. Never for an API lookup.
   */
  rowUnscoped(id: string): SandboxRow | undefined {
    return this.repo.rowUnscoped(id);
  }

  private rowById(id: string): SandboxRow {
    return this.repo.rowById(id);
  }

  view(row: SandboxRow, extra: { preview_auth_token?: string } = {}): SandboxView {
    return sandboxView(row, {
      volume: this.storage.volumeRef(row.volume_id),
      // Previews need the network and a plan that has them; the base names this engine's port.
      previewHostBase:
        row.network !== "off" && this.plan.previewsAllowed ? previewHostBase(row.id, this.config.port) : null,
      ...extra,
    });
  }

  get(account: string, id: string): SandboxView {
    return this.view(this.getRow(account, id));
  }

  list(account: string, filter: SandboxFilter): { items: SandboxView[]; next: string | null } {
    const { items, next } = this.repo.list(account, filter);
    return { items: items.map((r) => this.view(r)), next };
  }

  /**
   * Trial credit consumed so far: all metered CPU and RAM at pay-as-you-go rates, from the same
   * ledger as the usage report, capped at the credit (beyond it a paid plan is billed instead).
   */
  creditUsedEur(account: string): number {
    return this.limits.creditUsedEur(account);
  }

  /** Memory of an account's live (non-paused) sandboxes: the plan's concurrency gate is a RAM budget. */
  liveMemoryMb(account: string): number {
    return this.repo.liveMemoryMb(account);
  }

  pausedCount(account: string): number {
    return this.repo.pausedCount(account);
  }

  runningCount(account: string): number {
    return this.repo.runningCount(account);
  }

  /** Where a sandbox's workspace and tmp live (a claimed pool member keeps its pool key's directory). */
  sandboxDir(id: string): string {
    return this.live.get(id)?.proc.spec.dir ?? path.join(this.config.root, "sbx", id);
  }

  async create(account: string, body: CreateSandboxBody): Promise<{ view: SandboxView; status: 201 }> {
    if (this.closing) throw new ApiError("fleet_full", "The engine is shutting down", {}, { "Retry-After": "5" });
    if (this.host.isolation.mode === "unavailable") {
      throw new ApiError(
        "not_implemented",
        `This machine cannot run sandboxes: ${this.host.isolation.degraded[0] ?? "sandboxing unavailable"}`,
      );
    }
    // Named snapshots and volumes (sandbox-storage.ts): a fork takes its snapshot's template, size and region.
    const storagePlan = this.storage.plan(account, body);
    body = storagePlan.body;
    const requested = body.template!;
    const templateId = TEMPLATE_ALIASES[requested] ?? requested;
    // A custom template (id or name; 409 unless ready) runs on its base image plus its layer.
    const custom = this.host.images.has(templateId) ? undefined : this.templates.forSandbox(account, requested);
    const image = custom?.image ?? this.host.images.get(templateId);
    if (!image) {
      throw new ApiError(
        "template_not_found",
        `Template "${requested}" not found. Built-in base images: ${[...this.host.images.keys()].join(", ")}`,
      );
    }
    if (!image.available)
      throw new ApiError("template_not_found", `Template "${requested}" cannot run on this machine: ${image.maps_to}`);
    const region = body.region ?? REGIONS[0];
    if (!(REGIONS as readonly string[]).includes(region)) {
      throw new ApiError("region_unavailable", `Region "${region}" is not available; regions: ${REGIONS.join(", ")}`, {
        regions: REGIONS,
      });
    }
    if (body.network === "open" && !this.plan.networkOpenAllowed) {
      throw new ApiError(
        "payment_verification_required",
        `network "open" needs a verified payment method; the ${this.plan.name} plan allows "off" and "restricted"`,
      );
    }
    if (body.network === "open" && !this.host.isolation.network.open) {
      throw new ApiError(
        "network_not_allowed",
        'network "open" is unavailable on this machine (slirp4netns is not installed)',
      );
    }
    const shape = this.limits.resolveShape(body);
    const timeout = body.timeout_seconds ?? 300;
    this.limits.checkTimeout(timeout);
    this.limits.checkTrialCredit(account);
    this.limits.checkRamBudget(account, shape.memory_mb);
    const poolable =
      !custom &&
      !storagePlan.storage.snapshot &&
      !storagePlan.storage.volume &&
      body.network === "off" &&
      shape.cpu === POOL_SHAPE.cpu &&
      shape.memory_mb === POOL_SHAPE.memory_mb &&
      this.pool.serves(image.id);
    if (poolable) {
      // A member is already among the machine's commitments: refused only if the machine shrank under them.
      this.admission.admitResume(shape.memory_mb);
      const member = this.pool.take(image.id);
      if (member) return this.claim(account, body, member, { requested, shape, timeout, region });
    }
    this.admitEndingPoolMembers(shape.memory_mb);

    const id = newId("sbx");
    const uid = this.freeUid();
    const now = Date.now();
    const previewToken = body.preview_auth ? newSecret("pvt", 24) : null;
    const allowDomains = body.network === "restricted" ? (body.allow_domains ?? null) : null;
    this.storage.claim(storagePlan.storage, id, region);
    this.repo.insert({
      id,
      account_id: account,
      template: custom?.id ?? requested,
      size: shape.size,
      cpu: shape.cpu,
      memory_mb: shape.memory_mb,
      network: body.network,
      allow_domains: allowDomains ? JSON.stringify(allowDomains) : null,
      region,
      metadata: JSON.stringify(body.metadata),
      env_keys: JSON.stringify(Object.keys(body.env)),
      timeout_seconds: timeout,
      on_timeout: body.on_timeout,
      auto_resume: body.auto_resume ? 1 : 0,
      preview_auth: body.preview_auth ? 1 : 0,
      preview_token_hash: previewToken ? createHash("sha256").update(previewToken).digest("hex") : null,
      uid,
      created_at: now,
    });

    const dir = this.sandboxDir(id);
    let cgroup;
    // A terminate that arrives while the sandbox boots waits for the boot to settle (see terminate()).
    let booted!: () => void;
    this.creating.set(id, new Promise<void>((r) => (booted = r)));
    try {
      await createSandboxDirs(dir, uid, this.scratchFor(shape.memory_mb));
      const binds = await this.storage.populate(storagePlan.storage, id, dir, uid);
      cgroup = await this.host.cgroups.create(id, {
        memoryBytes: shape.memory_mb * 1024 * 1024,
        cpu: shape.cpu,
        pidsMax: PIDS_MAX,
      });
      const env = sandboxEnv(id, image, custom?.env, body);
      const limits = { memoryBytes: shape.memory_mb * 1024 * 1024, pidsMax: PIDS_MAX };
      const rootfs = custom ? { path: await this.templates.acquire(id, custom.id), writable: false } : undefined;
      const proc = await SandboxProcess.start(
        this.host,
        { id, uid, dir, image, env, network: body.network, limits, binds, rootfs },
        cgroup,
      );
      const network = await startNetwork(
        this.host,
        proc,
        body.network,
        allowDomains ?? DEFAULT_EGRESS_DOMAINS,
        this.config,
      ).catch(async (e: Error) => {
        await proc.kill();
        throw e;
      });
      this.goLive(id, { proc, network, env, cpu: shape.cpu, timeout, pooled: false });
    } catch (e) {
      await cgroup?.destroy().catch(() => undefined);
      await removeSandboxDirs(dir, this.host.scratchTmpfs);
      await this.storage.abandon(id).catch(() => undefined);
      await this.templates.releaseFor(id).catch(() => undefined);
      // What the client may read (the row, its event, the answer) says what failed and where to
      // look; the internal cause (bwrap's or mkfs's words, host paths) goes to the engine log only.
      const err = e instanceof ApiError ? e : ApiError.internal("The sandbox failed to start", e);
      const reason = typeof err.detail === "string" ? err.detail : err.code;
      this.repo.markFailed(id, `start failed: ${reason}`, Date.now());
      this.events.record(id, "sandbox.failed", { reason });
      throw err;
    } finally {
      this.creating.delete(id);
      booted();
    }
    const view = this.view(this.rowById(id), body.preview_auth ? { preview_auth_token: previewToken! } : {});
    this.events.record(id, "sandbox.created", {
      template: requested,
      size: shape.size,
      network: body.network,
      start: "cold",
      ...this.storage.createdEventData(storagePlan.storage),
    });
    return { view, status: 201 };
  }

  /**
   * Host admission for a cold boot. The pool gives way to customers: when the machine is short,
   * ready pool members are ended one by one until the sandbox fits (or none is left to end).
   */
  private admitEndingPoolMembers(memoryMb: number): void {
    for (;;) {
      try {
        this.admission.admitSandbox(memoryMb);
        return;
      } catch (e) {
        if (!(e instanceof ApiError && e.code === "fleet_full") || !this.pool.evictOne()) throw e;
      }
    }
  }

  /**
   * A create served from the warm pool. Everything of the account is applied here, to a sandbox
   * that ran nothing yet: a fresh id (ids sort by creation), the row with its metadata, countdown
   * and flags, the environment every command will get, a meter that bills from now on. No await
   * between take() and the row going running, so no other request sees it half made.
   */
  private claim(
    account: string,
    body: CreateSandboxBody,
    m: PoolMember,
    c: { requested: string; shape: { size: string; cpu: number; memory_mb: number }; timeout: number; region: string },
  ): { view: SandboxView; status: 201 } {
    const id = newId("sbx");
    const previewToken = body.preview_auth ? newSecret("pvt", 24) : null;
    let inserted = false;
    try {
      this.repo.insert({
        id,
        account_id: account,
        template: c.requested,
        size: c.shape.size,
        cpu: c.shape.cpu,
        memory_mb: c.shape.memory_mb,
        network: "off",
        allow_domains: null,
        region: c.region,
        metadata: JSON.stringify(body.metadata),
        env_keys: JSON.stringify(Object.keys(body.env)),
        timeout_seconds: c.timeout,
        on_timeout: body.on_timeout,
        auto_resume: body.auto_resume ? 1 : 0,
        preview_auth: body.preview_auth ? 1 : 0,
        preview_token_hash: previewToken ? createHash("sha256").update(previewToken).digest("hex") : null,
        uid: m.uid,
        created_at: Date.now(),
      });
      inserted = true;
      // The member's files live under its pool key; the link lets whatever finds a sandbox's
      // directory by its id (snapshots, a restarted engine) find them.
      fs.symlinkSync(m.proc.spec.dir, path.join(this.config.root, "sbx", id));
      const env = sandboxEnv(id, m.proc.spec.image, undefined, body);
      // The member's spec.env was empty: its init never had the environment (commands get spec.env
      // as they enter), so this account's is the first and only one any process inside will see.
      m.proc.spec.env = env;
      // A restarted engine adopts it with this environment (runtime/holder.ts keeps the spec).
      m.proc.saveRecord();
      this.goLive(id, { proc: m.proc, network: m.network, env, cpu: c.shape.cpu, timeout: c.timeout, pooled: true });
      const view = this.view(this.rowById(id), body.preview_auth ? { preview_auth_token: previewToken! } : {});
      this.events.record(id, "sandbox.created", {
        template: c.requested,
        size: c.shape.size,
        network: "off",
        start: "warm",
      });
      return { view, status: 201 };
    } catch (e) {
      // A member taken from the pool never outlives a failed claim unseen: it is ended, and the
      // row it got (if any) says the start failed, as a cold boot's would.
      const l = this.live.get(id);
      if (l?.timer) clearTimeout(l.timer);
      this.live.delete(id);
      fs.rmSync(path.join(this.config.root, "sbx", id), { force: true });
      void this.pool.discardTaken(m);
      const err = e instanceof ApiError ? e : ApiError.internal("The sandbox failed to start", e);
      if (inserted) {
        const reason = typeof err.detail === "string" ? err.detail : err.code;
        try {
          this.repo.markFailed(id, `start failed: ${reason}`, Date.now());
        } catch {
          // The database that failed the claim may fail this too; the engine log has the cause.
        }
      }
      throw err;
    }
  }

  /** The end of every create, cold or warm: the sandbox is live, metered, counting down. */
  private goLive(
    id: string,
    s: {
      proc: SandboxProcess;
      network: Live["network"];
      env: Record<string, string>;
      cpu: number;
      timeout: number;
      pooled: boolean;
    },
  ): void {
    const meter = new SandboxMeter(s.cpu, Math.ceil(3_600_000 / this.config.sampleMs), {
      cpu_seconds: 0,
      gb_seconds: 0,
    });
    // A pool member's cgroup counted its boot: the claiming account pays from the claim on.
    if (s.pooled) meter.startFrom(s.proc.cgroup);
    const live: Live = { proc: s.proc, meter, network: s.network, timer: null, env: s.env, lock: Promise.resolve() };
    this.live.set(id, live);
    s.proc.onExit((reason) => void this.onProcessDied(id, reason));
    const started = Date.now();
    this.repo.markRunning(id, started, this.deadline(started, started, s.timeout));
    this.armTimer(id);
    meter.sample(s.proc.cgroup, started);
  }

  /** The countdown ends at now + timeout, or sooner where the plan caps continuous running. */
  private deadline(now: number, runningSince: number, timeoutSeconds: number): number {
    const byTimeout = now + timeoutSeconds * 1000;
    return this.plan.maxRunningSeconds
      ? Math.min(byTimeout, runningSince + this.plan.maxRunningSeconds * 1000)
      : byTimeout;
  }

  private armTimer(id: string): void {
    const l = this.live.get(id);
    const row = this.rowUnscoped(id);
    if (!l || !row || row.expires_at === null) return;
    if (l.timer) clearTimeout(l.timer);
    const ms = Math.max(0, row.expires_at - Date.now());
    // setTimeout caps at ~24.8 days; plans cap countdowns at 24 h, well inside.
    l.timer = setTimeout(() => void this.expire(id), ms);
    l.timer.unref();
  }

  /** Runs from a timer: it must never throw, so a pause that fails ends in terminate instead. */
  private async expire(id: string): Promise<void> {
    try {
      const row = this.rowUnscoped(id);
      if (!row || row.status !== "running") return;
      let why = "countdown ended";
      if (row.on_timeout === "pause") {
        if (this.limits.pausedCapReached(row.account_id))
          why = "countdown ended; paused-sandbox cap reached, so it was terminated";
        else {
          try {
            await this.pauseById(id, "timeout");
            this.events.record(id, "sandbox.expired", { action: "paused" });
            return;
          } catch (e) {
            why = `countdown ended; pausing failed (${e instanceof ApiError ? e.detail : (e as Error).message}), so it was terminated`;
          }
        }
      }
      await this.terminateById(id, "expired", why);
      this.events.record(id, "sandbox.expired", { action: "killed" });
    } catch (e) {
      console.error(`[engine] expiring ${id} failed: ${(e as Error).message}`);
    }
  }

  private async onProcessDied(id: string, reason: string): Promise<void> {
    const row = this.rowUnscoped(id);
    // release() drops the live entry before it kills: then the death was asked for, not a failure.
    if (!row || GONE.includes(row.status) || this.closing || !this.live.has(id)) return;
    const l = this.live.get(id);
    const oom = l ? l.proc.cgroup.read().oomKills > 0 : false;
    await this.release(id);
    this.repo.markFailed(id, oom ? `${reason} (out of memory)` : reason, Date.now());
    this.events.record(id, "sandbox.failed", { reason });
  }

  /** Runs `fn` as one lifecycle step of the sandbox (named snapshots: a terminate waits for the copy). */
  exclusive<T>(id: string, fn: () => Promise<T>): Promise<T> {
    return this.serialize(id, fn);
  }

  /** Runs lifecycle changes of one sandbox one at a time. */
  private serialize<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const l = this.live.get(id);
    if (!l) return fn();
    const next = l.lock.then(fn, fn);
    l.lock = next.catch(() => undefined);
    return next;
  }

  /** DELETE /v1/sandboxes/{id}: terminate one of the account's sandboxes (idempotent). */
  terminate(account: string, id: string): Promise<void> {
    return this.terminateById(this.getRow(account, id).id);
  }

  private async terminateById(
    id: string,
    finalStatus: "terminated" | "expired" = "terminated",
    reason: string | null = null,
  ): Promise<void> {
    let row = this.rowById(id);
    const booting = this.creating.get(row.id);
    if (booting) {
      await booting;
      row = this.rowById(row.id);
    }
    if (GONE.includes(row.status)) return;
    await this.serialize(row.id, async () => {
      await this.release(row.id);
      this.repo.markEnded(row.id, finalStatus, Date.now(), reason);
      if (finalStatus === "terminated") this.events.record(row.id, "sandbox.terminated", reason ? { reason } : {});
    });
  }

  /** Kills the process tree and frees the cgroups, network and files of a sandbox. */
  private async release(id: string): Promise<void> {
    // Read while the sandbox is still live: a claimed pool member's directory is named by its pool key.
    const dir = this.sandboxDir(id);
    const l = this.live.get(id);
    if (l) {
      if (l.timer) clearTimeout(l.timer);
      this.sampler.final(id);
      this.live.delete(id);
      // Processes first: the network helpers live in the sandbox's cgroups and die with it,
      // even when the sandbox is frozen.
      await l.proc.kill();
      await l.network.close().catch(() => undefined);
      for (const hook of this.releaseHooks)
        await hook(id).catch((e: Error) => console.error(`[engine] release hook for ${id} failed: ${e.message}`));
    }
    // After the processes: nothing holds the volume's filesystem any more when it is unmounted.
    await this.storage
      .released(id)
      .catch((e: Error) => console.error(`[engine] releasing the volume of ${id} failed: ${e.message}`));
    // The last sandbox of a template unmounts its view (and removes a deleted template's files).
    await this.templates
      .releaseFor(id)
      .catch((e: Error) => console.error(`[engine] releasing the template of ${id} failed: ${e.message}`));
    await removeSandboxDirs(dir, this.host.scratchTmpfs);
    // A claimed pool member's link from its id (claim()); a no-op for every other sandbox.
    await fsp.rm(path.join(this.config.root, "sbx", id), { force: true }).catch(() => undefined);
  }

  /**
   * /workspace and /tmp share one tmpfs sized like the sandbox's memory (what the sandbox writes
   * there is charged to its memory cgroup anyway; this caps what the engine writes for it too).
   */
  private scratchFor(memoryMb: number): { bytes: number; inodes: number } | null {
    if (!this.host.scratchTmpfs) return null;
    return { bytes: Math.max(256, memoryMb) * 1024 * 1024, inodes: Math.max(65_536, memoryMb * 256) };
  }

  pause(account: string, id: string): Promise<SandboxView> {
    return this.pauseById(this.getRow(account, id).id, "api");
  }

  private async pauseById(id: string, why: "api" | "timeout"): Promise<SandboxView> {
    const row = this.rowById(id);
    if (row.status === "paused") return this.view(row);
    // POST /v1/sandboxes/:id/pause: pausing anything but a running sandbox (terminated included) is 409 sandbox_not_running.
    if (row.status !== "running") throw new ApiError("sandbox_not_running", `Sandbox ${row.id} is ${row.status}`);
    if (why === "api") this.limits.checkPausedCap(row.account_id);
    if (!this.host.isolation.cgroups.freezer)
      throw new ApiError("not_implemented", "Pause needs the freezer cgroup, which this machine does not provide");
    return this.serialize(row.id, async () => {
      const l = this.live.get(row.id)!;
      l.meter.sample(l.proc.cgroup, Date.now());
      const frozen = await l.proc.cgroup.freeze();
      if (!frozen) throw new ApiError("internal_error", "The freezer did not freeze every process within 2 s");
      if (l.timer) clearTimeout(l.timer);
      l.timer = null;
      this.usage.persist(row.id, l.meter);
      this.repo.markPaused(row.id, Date.now());
      this.events.record(row.id, "sandbox.paused", { reason: why });
      return this.view(this.rowById(row.id));
    });
  }

  resume(account: string, id: string, timeoutSeconds?: number): Promise<SandboxView> {
    return this.resumeById(this.getRow(account, id).id, timeoutSeconds);
  }

  private async resumeById(id: string, timeoutSeconds?: number): Promise<SandboxView> {
    const row = this.rowById(id);
    if (row.status !== "paused")
      throw new ApiError("sandbox_not_paused", `Sandbox ${row.id} is ${row.status}, not paused`);
    const timeout = timeoutSeconds ?? row.timeout_seconds;
    this.limits.checkTimeout(timeout);
    this.limits.checkRamBudget(row.account_id, row.memory_mb);
    this.admission.admitResume(row.memory_mb);
    return this.serialize(row.id, async () => {
      const l = this.live.get(row.id)!;
      const thawed = await l.proc.cgroup.thaw();
      if (!thawed) throw new ApiError("internal_error", "The freezer did not thaw the sandbox within 2 s");
      l.meter.resetBaseline();
      const now = Date.now();
      this.repo.markResumed(row.id, now, timeout, this.deadline(now, now, timeout));
      this.armTimer(row.id);
      this.events.record(row.id, "sandbox.resumed", {});
      return this.view(this.rowById(row.id));
    });
  }

  async setTimeout(account: string, id: string, seconds: number): Promise<SandboxView> {
    const row = this.getRow(account, id);
    if (GONE.includes(row.status)) throw gone(row);
    if (row.status !== "running")
      throw new ApiError(
        "sandbox_not_running",
        `Sandbox ${row.id} is ${row.status}; resume it before changing its countdown`,
      );
    this.limits.checkTimeout(seconds);
    const now = Date.now();
    if (
      this.plan.maxRunningSeconds &&
      row.running_since &&
      now - row.running_since >= this.plan.maxRunningSeconds * 1000
    ) {
      throw new ApiError(
        "plan_limit",
        `The ${this.plan.name} plan caps continuous running at ${this.plan.maxRunningSeconds} s; pause and resume to start a new window`,
      );
    }
    this.repo.setCountdown(row.id, seconds, this.deadline(now, row.running_since ?? now, seconds));
    this.armTimer(row.id);
    this.events.record(row.id, "timeout.updated", { timeout_seconds: seconds });
    return this.view(this.rowById(row.id));
  }

  async patch(
    account: string,
    id: string,
    body: {
      metadata?: Record<string, string>;
      timeout_seconds?: number;
      auto_resume?: boolean;
      on_timeout?: "kill" | "pause";
    },
  ): Promise<SandboxView> {
    const row = this.getRow(account, id);
    if (GONE.includes(row.status)) throw gone(row);
    if (body.timeout_seconds !== undefined) await this.setTimeout(account, row.id, body.timeout_seconds);
    if (body.metadata !== undefined) this.repo.setMetadata(row.id, body.metadata);
    if (body.auto_resume !== undefined) this.repo.setAutoResume(row.id, body.auto_resume);
    if (body.on_timeout !== undefined) this.repo.setOnTimeout(row.id, body.on_timeout);
    return this.view(this.rowById(row.id));
  }

  /**
   * The live sandbox for exec and file calls: a paused one resumes first when it asked for
   * auto_resume, otherwise the caller learns exactly why it cannot run.
   */
  running(account: string, id: string): Promise<{ row: SandboxRow; live: Live }> {
    return this.runningFrom(this.getRow(account, id));
  }

  /**
   * running() for a row found earlier (a preview host names its sandbox itself): read again, as
   * the sandbox may have changed since.
   */
  runningRow(found: SandboxRow): Promise<{ row: SandboxRow; live: Live }> {
    return this.runningFrom(this.rowById(found.id));
  }

  /** `row` was read just now (in this tick): exec and file calls pay for one lookup, not two. */
  private async runningFrom(current: SandboxRow): Promise<{ row: SandboxRow; live: Live }> {
    let row = current;
    if (GONE.includes(row.status)) throw gone(row);
    if (row.status === "paused") {
      if (!row.auto_resume)
        throw new ApiError(
          "sandbox_paused",
          `Sandbox ${row.id} is paused; resume it first (or create it with auto_resume)`,
        );
      await this.resumeById(row.id);
      row = this.rowById(row.id);
    }
    const l = this.live.get(row.id);
    if (row.status !== "running" || !l) throw new ApiError("sandbox_not_running", `Sandbox ${row.id} is ${row.status}`);
    return { row, live: l };
  }

  meter(id: string): SandboxMeter | undefined {
    return this.live.get(id)?.meter;
  }

  /** The process tree of a sandbox whose processes exist (running or paused), without waking it. */
  process(id: string): SandboxProcess | undefined {
    return this.live.get(id)?.proc;
  }

  onRelease(hook: (id: string) => Promise<void>): void {
    this.releaseHooks.push(hook);
  }

  /**
   * Engine stop. By default everything this engine runs is terminated and nothing is left behind
   * (tests, CI and `npm start`'s Ctrl-C rely on it). With `keep` (SIGUSR2: an upgrade) sandboxes a
   * restarted engine can adopt keep running: their usage is persisted and the engine just lets go.
   */
  async shutdown(opts: { keep?: boolean } = {}): Promise<void> {
    this.closing = true;
    this.keepingSandboxes = opts.keep === true;
    this.sampler.stop();
    await this.pool.drain();
    const ids = [...this.live.keys()];
    await Promise.all(
      ids.map(async (id) => {
        const l = this.live.get(id)!;
        const row = this.rowById(id);
        if (opts.keep && l.proc.survivesEngine && !this.notAdoptable()) {
          if (l.timer) clearTimeout(l.timer);
          if (row.status === "running") l.meter.sample(l.proc.cgroup, Date.now());
          this.usage.persist(id, l.meter);
          this.live.delete(id);
          return;
        }
        await this.release(id);
        this.repo.markEnded(id, "terminated", Date.now(), "engine shut down");
        this.events.record(id, "sandbox.terminated", { reason: "engine_shutdown" });
      }),
    );
  }
}

function isMountPoint(dir: string): boolean {
  try {
    return fs.statSync(dir).dev !== fs.statSync(path.dirname(dir)).dev;
  } catch {
    return false;
  }
}

/** The environment every command of a sandbox gets: the image's, the template's, the create's. */
function sandboxEnv(
  id: string,
  image: { path: string; env: Record<string, string> },
  templateEnv: Record<string, string> | undefined,
  body: CreateSandboxBody,
): Record<string, string> {
  return {
    PATH: image.path,
    HOME: "/workspace",
    LANG: "C.UTF-8",
    TERM: "xterm-256color",
    ORKESTR_SANDBOX_ID: id,
    ...image.env,
    ...templateEnv,
    ...(body.network === "restricted" ? proxyEnv() : {}),
    ...body.env,
  };
}

function gone(row: SandboxRow): ApiError {
  if (row.status === "failed")
    return new ApiError("sandbox_not_running", `Sandbox ${row.id} failed: ${row.status_reason ?? "unknown reason"}`);
  return new ApiError(
    "sandbox_terminated",
    `Sandbox ${row.id} was ${row.status === "expired" ? "terminated when its countdown ended" : "terminated"}`,
  );
}
