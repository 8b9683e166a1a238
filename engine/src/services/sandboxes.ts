import { createHash } from "node:crypto";
import path from "node:path";
import type { EngineConfig } from "../config.js";
import { ApiError } from "../errors.js";
import { canonicalId, newId, newSecret } from "../lib/ids.js";
import { iso, isoOrNull } from "../lib/time.js";
import { previewHostBase } from "../lib/preview-host.js";
import { PLANS, REGIONS, SIZES, DEFAULT_EGRESS_DOMAINS, type Plan, type SizeName } from "../plans.js";
import { UID_BLOCK, type Host } from "../runtime/host.js";
import { createSandboxDirs, removeSandboxDirs, SandboxProcess } from "../runtime/sandbox-proc.js";
import { startNetwork, type NetworkHandle } from "../runtime/network.js";
import { TEMPLATE_ALIASES } from "../runtime/templates.js";
import type { CreateSandboxBody } from "../schemas.js";
import type { Db } from "../store/db.js";
import type { HostAdmission } from "./admission.js";
import type { EventLog } from "./events.js";
import type { TemplateService } from "./templates.js";
import { SandboxMeter } from "./metrics.js";
import type { SandboxStorage } from "./sandbox-storage.js";
import type { VolumeRef } from "./volumes.js";
import { UsageLedger } from "./usage.js";

export type SandboxStatus =
  "creating" | "running" | "pausing" | "paused" | "resuming" | "terminated" | "expired" | "failed";
const GONE: SandboxStatus[] = ["terminated", "expired", "failed"];

interface SandboxRow {
  id: string;
  /** The account it belongs to: every lookup on behalf of a request is scoped by it. */
  account_id: string;
  status: SandboxStatus;
  template: string;
  size: string;
  cpu: number;
  memory_mb: number;
  network: "off" | "restricted" | "open";
  allow_domains: string | null;
  region: string;
  metadata: string;
  env_keys: string;
  timeout_seconds: number;
  on_timeout: "kill" | "pause";
  auto_resume: number;
  preview_auth: number;
  preview_token_hash: string | null;
  uid: number;
  created_at: number;
  started_at: number | null;
  expires_at: number | null;
  paused_at: number | null;
  terminated_at: number | null;
  running_since: number | null;
  status_reason: string | null;
  cpu_seconds: number;
  gb_seconds: number;
  /** The named snapshot it was forked from, and the volume it holds (or held). */
  snapshot_id: string | null;
  volume_id: string | null;
}

/** What the engine keeps in memory for a sandbox whose processes exist. */
interface Live {
  proc: SandboxProcess;
  meter: SandboxMeter;
  network: NetworkHandle;
  timer: NodeJS.Timeout | null;
  env: Record<string, string>;
  /** Serializes lifecycle transitions of this sandbox. */
  lock: Promise<unknown>;
}

export interface SandboxView {
  id: string;
  status: SandboxStatus;
  template: string;
  size: string;
  cpu: number;
  memory_mb: number;
  network: string;
  allow_domains: string[] | null;
  region: string;
  metadata: Record<string, string>;
  env_keys: string[];
  timeout_seconds: number;
  on_timeout: string;
  auto_resume: boolean;
  volume: VolumeRef | null;
  snapshot: string | null;
  preview_auth: boolean;
  preview_auth_token?: string | null;
  preview_host_base: string | null;
  created_at: string;
  started_at: string | null;
  expires_at: string | null;
  paused_at: string | null;
  terminated_at: string | null;
  status_reason: string | null;
}

/** pids.max of every sandbox (host admission reserves it per live or paused sandbox). */
export const PIDS_MAX = 1024;

export class SandboxService {
  readonly plan: Plan;
  /** Books metered usage per UTC day; the usage report and the trial-credit gate read it. */
  readonly usage: UsageLedger;
  /** Custom templates (set by app.ts): resolves them at create and holds their layer while a sandbox runs. */
  templates?: TemplateService;
  private live = new Map<string, Live>();
  /** Sandboxes still booting: settled when their create finishes either way. */
  private creating = new Map<string, Promise<void>>();
  private sampler: NodeJS.Timeout | null = null;
  private persistCounter = 0;
  private closing = false;
  /** Named snapshots and volumes (services/sandbox-storage.ts); set once at engine start. */
  storage: SandboxStorage | null = null;
  /** The machine's capacity (services/admission.ts), checked after the plan's; set once at engine start. */
  admission: HostAdmission | null = null;
  /** Run once a sandbox's processes are gone (terminate, expiry, failure, shutdown): previews drop their relays. */
  private releaseHooks: ((id: string) => Promise<void>)[] = [];

  constructor(
    private readonly config: EngineConfig,
    private readonly db: Db,
    private readonly host: Host,
    private readonly events: EventLog,
  ) {
    const plan = PLANS[config.plan];
    this.plan = config.trialCreditEur === undefined ? plan : { ...plan, trialCreditEur: config.trialCreditEur };
    this.usage = new UsageLedger(db, () => [...this.live].map(([id, l]) => [id, l.meter] as [string, SandboxMeter]));
  }

  /** Sandboxes whose processes died with an earlier engine run are marked failed, never dropped. */
  recoverAfterRestart(): number {
    const now = Date.now();
    const stale = this.db
      .prepare(`SELECT id, status FROM sandboxes WHERE status NOT IN ('terminated','expired','failed')`)
      .all() as { id: string; status: string }[];
    for (const s of stale) {
      this.db
        .prepare("UPDATE sandboxes SET status='failed', status_reason=?, terminated_at=? WHERE id=?")
        .run(`engine restarted while the sandbox was ${s.status}; its processes no longer exist`, now, s.id);
      this.events.record(s.id, "sandbox.failed", { reason: "engine_restart", previous_status: s.status });
    }
    return stale.length;
  }

  startSampler(): void {
    this.sampler = setInterval(() => this.sampleAll(), this.config.sampleMs);
    this.sampler.unref();
  }

  private sampleAll(): void {
    const now = Date.now();
    const persist = ++this.persistCounter % 10 === 0;
    for (const [id, l] of this.live) {
      const row = this.rowUnscoped(id);
      if (!row || row.status !== "running") continue;
      l.meter.sample(l.proc.cgroup, now);
      if (persist) this.persistMeter(id, l.meter);
    }
  }

  private persistMeter(id: string, meter: SandboxMeter): void {
    this.usage.persist(id, meter);
  }

  /**
   * A sandbox of `account`. Another account's sandbox is exactly as unknown as one that never
   * existed: the same lookup, the same 404.
   */
  row(account: string, id: string): SandboxRow | undefined {
    return this.db.prepare("SELECT * FROM sandboxes WHERE id = ? AND account_id = ?").get(canonicalId(id), account) as
      SandboxRow | undefined;
  }

  getRow(account: string, id: string): SandboxRow {
    const row = this.row(account, id);
    if (!row) throw new ApiError("sandbox_not_found", `Sandbox ${id} not found`);
    return row;
  }

  /**
   * Any account's sandbox, by exact id: only for the engine's own work (timers, the sampler,
   * webhooks) and for preview hosts, whose URL names the sandbox itself. Never for an API lookup.
   */
  rowUnscoped(id: string): SandboxRow | undefined {
    return this.db.prepare("SELECT * FROM sandboxes WHERE id = ?").get(canonicalId(id)) as SandboxRow | undefined;
  }

  private rowById(id: string): SandboxRow {
    const row = this.rowUnscoped(id);
    if (!row) throw new ApiError("sandbox_not_found", `Sandbox ${id} not found`);
    return row;
  }

  view(row: SandboxRow, extra: { preview_auth_token?: string } = {}): SandboxView {
    const v: SandboxView = {
      id: row.id,
      status: row.status,
      template: row.template,
      size: row.size,
      cpu: row.cpu,
      memory_mb: row.memory_mb,
      network: row.network,
      allow_domains: row.allow_domains ? (JSON.parse(row.allow_domains) as string[]) : null,
      region: row.region,
      metadata: JSON.parse(row.metadata) as Record<string, string>,
      env_keys: JSON.parse(row.env_keys) as string[],
      timeout_seconds: row.timeout_seconds,
      on_timeout: row.on_timeout,
      auto_resume: !!row.auto_resume,
      volume: this.storage?.volumeRef(row.volume_id) ?? null,
      snapshot: row.snapshot_id ?? null,
      preview_auth: !!row.preview_auth,
      preview_host_base:
        row.network !== "off" && this.plan.previewsAllowed ? previewHostBase(row.id, this.config.port) : null,
      created_at: iso(row.created_at),
      started_at: isoOrNull(row.started_at),
      expires_at: isoOrNull(row.expires_at),
      paused_at: isoOrNull(row.paused_at),
      terminated_at: isoOrNull(row.terminated_at),
      status_reason: row.status_reason,
    };
    if ("preview_auth_token" in extra) v.preview_auth_token = extra.preview_auth_token ?? null;
    return v;
  }

  get(account: string, id: string): SandboxView {
    return this.view(this.getRow(account, id));
  }

  list(
    account: string,
    filter: {
      statuses: string[];
      metadata: Record<string, string>;
      template?: string;
      region?: string;
      limit: number;
      cursor?: string;
    },
  ): { items: SandboxView[]; next: string | null } {
    const where: string[] = ["account_id = ?"];
    const args: unknown[] = [account];
    if (filter.statuses.length) {
      where.push(`status IN (${filter.statuses.map(() => "?").join(",")})`);
      args.push(...filter.statuses);
    } else where.push(`status NOT IN ('terminated','expired')`);
    for (const [k, v] of Object.entries(filter.metadata)) {
      // json_each compares keys as data: no key can break out into a JSON path.
      where.push(
        "EXISTS (SELECT 1 FROM json_each(sandboxes.metadata) WHERE json_each.key = ? AND json_each.value = ?)",
      );
      args.push(k, v);
    }
    if (filter.template) {
      where.push("template = ?");
      args.push(filter.template);
    }
    if (filter.region) {
      where.push("region = ?");
      args.push(filter.region);
    }
    if (filter.cursor) {
      where.push("id < ?");
      args.push(filter.cursor);
    }
    const rows = this.db
      .prepare(`SELECT * FROM sandboxes WHERE ${where.join(" AND ")} ORDER BY id DESC LIMIT ?`)
      .all(...args, filter.limit + 1) as SandboxRow[];
    const page = rows.slice(0, filter.limit);
    return {
      items: page.map((r) => this.view(r)),
      next: rows.length > filter.limit ? page[page.length - 1]!.id : null,
    };
  }

  /**
   * Trial credit consumed so far: all metered CPU and RAM at pay-as-you-go rates, from the same
   * ledger as the usage report, capped at the credit (beyond it a paid plan is billed instead).
   */
  creditUsedEur(account: string): number {
    return Math.min(this.plan.trialCreditEur, this.usage.lifetimeCostEur(account));
  }

  /** Memory of an account's live (non-paused) sandboxes: the plan's concurrency gate is a RAM budget. */
  liveMemoryMb(account: string): number {
    const row = this.db
      .prepare(
        `SELECT COALESCE(SUM(memory_mb),0) AS mb FROM sandboxes WHERE account_id = ? AND status IN ('creating','running','resuming','pausing')`,
      )
      .get(account) as { mb: number };
    return row.mb;
  }

  pausedCount(account: string): number {
    return (
      this.db
        .prepare(`SELECT COUNT(*) AS n FROM sandboxes WHERE account_id = ? AND status = 'paused'`)
        .get(account) as { n: number }
    ).n;
  }

  runningCount(account: string): number {
    return (
      this.db
        .prepare(
          `SELECT COUNT(*) AS n FROM sandboxes WHERE account_id = ? AND status IN ('creating','running','resuming','pausing')`,
        )
        .get(account) as { n: number }
    ).n;
  }

  private resolveShape(body: CreateSandboxBody): { size: string; cpu: number; memory_mb: number } {
    if (body.size) {
      if (!this.plan.allowedSizes.includes(body.size)) {
        throw new ApiError(
          "size_not_allowed",
          `Size "${body.size}" is not available on the ${this.plan.name} plan (allowed: ${this.plan.allowedSizes.join(", ")})`,
          { allowed_sizes: this.plan.allowedSizes },
        );
      }
      return { size: body.size, ...SIZES[body.size] };
    }
    if (body.cpu === undefined && body.memory_mb === undefined) return { size: "small", ...SIZES.small };
    // First-generation fields: capped by the largest size the plan allows.
    const biggest = SIZES[this.plan.allowedSizes[this.plan.allowedSizes.length - 1] as SizeName];
    const cpu = body.cpu ?? 1;
    const memory_mb = body.memory_mb ?? 1024;
    if (cpu > biggest.cpu || memory_mb > biggest.memory_mb) {
      throw new ApiError(
        "size_not_allowed",
        `cpu ${cpu} / memory_mb ${memory_mb} exceeds the ${this.plan.name} plan's largest size (${biggest.cpu} vCPU / ${biggest.memory_mb} MB)`,
      );
    }
    const named = (Object.keys(SIZES) as SizeName[]).find(
      (s) => SIZES[s].cpu === cpu && SIZES[s].memory_mb === memory_mb,
    );
    return { size: named ?? "custom", cpu, memory_mb };
  }

  private checkTimeout(seconds: number): void {
    if (seconds > this.plan.maxTimeoutSeconds) {
      throw new ApiError(
        "plan_limit",
        `timeout_seconds ${seconds} exceeds the ${this.plan.name} plan's countdown cap of ${this.plan.maxTimeoutSeconds} s`,
        { max_timeout_seconds: this.plan.maxTimeoutSeconds },
      );
    }
  }

  private checkRamBudget(account: string, extraMb: number): void {
    const used = this.liveMemoryMb(account);
    if (used + extraMb > this.plan.ramBudgetMb) {
      throw new ApiError(
        "concurrency_limit",
        `The ${this.plan.name} plan's concurrent RAM budget is ${this.plan.ramBudgetMb} MB; live sandboxes use ${used} MB and this one needs ${extraMb} MB. Pause or terminate a sandbox first.`,
        { ram_budget_mb: this.plan.ramBudgetMb, ram_used_mb: used },
        { "Retry-After": "30" },
      );
    }
  }

  private allocateUid(): number {
    const used = new Set([...this.live.values()].map((l) => l.proc.spec.uid));
    const creating = this.db
      .prepare(`SELECT uid FROM sandboxes WHERE status IN ('creating','running','paused','pausing','resuming')`)
      .all() as { uid: number }[];
    for (const c of creating) used.add(c.uid);
    // The block's last uid belongs to template builds (runtime/template-build.ts builderUid).
    for (let uid = this.host.uidBase; uid < this.host.uidBase + UID_BLOCK - 1; uid++) if (!used.has(uid)) return uid;
    throw new ApiError(
      "fleet_full",
      `All ${UID_BLOCK} sandbox uids of this engine are in use`,
      {},
      { "Retry-After": "30" },
    );
  }

  sandboxDir(id: string): string {
    return path.join(this.config.root, "sbx", id);
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
    const storagePlan = this.storage?.plan(account, body);
    if (storagePlan) body = storagePlan.body;
    const requested = body.template!;
    const templateId = TEMPLATE_ALIASES[requested] ?? requested;
    // A custom template (id or name; 409 unless ready) runs on its base image plus its layer.
    const custom = this.host.images.has(templateId) ? undefined : this.templates?.forSandbox(account, requested);
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
    const shape = this.resolveShape(body);
    const timeout = body.timeout_seconds ?? 300;
    this.checkTimeout(timeout);
    if (this.plan.trialIsHardLimit && this.creditUsedEur(account) >= this.plan.trialCreditEur) {
      throw new ApiError(
        "trial_exhausted",
        `The ${this.plan.name} plan's one-time trial credit of EUR ${this.plan.trialCreditEur} is used up`,
        { trial_credit_eur: this.plan.trialCreditEur },
      );
    }
    this.checkRamBudget(account, shape.memory_mb);
    this.admission?.admitSandbox(shape.memory_mb);

    const id = newId("sbx");
    const uid = this.allocateUid();
    const now = Date.now();
    const previewToken = body.preview_auth ? newSecret("pvt", 24) : null;
    const allowDomains = body.network === "restricted" ? (body.allow_domains ?? null) : null;
    if (storagePlan) this.storage!.claim(storagePlan.storage, id, region);
    this.db
      .prepare(
        `INSERT INTO sandboxes(id,account_id,status,template,size,cpu,memory_mb,network,allow_domains,region,metadata,env_keys,timeout_seconds,on_timeout,auto_resume,preview_auth,preview_token_hash,uid,created_at)
         VALUES (?,?,'creating',?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
      )
      .run(
        id,
        account,
        custom?.id ?? requested,
        shape.size,
        shape.cpu,
        shape.memory_mb,
        body.network,
        allowDomains ? JSON.stringify(allowDomains) : null,
        region,
        JSON.stringify(body.metadata),
        JSON.stringify(Object.keys(body.env)),
        timeout,
        body.on_timeout,
        body.auto_resume ? 1 : 0,
        body.preview_auth ? 1 : 0,
        previewToken ? createHash("sha256").update(previewToken).digest("hex") : null,
        uid,
        now,
      );

    const dir = this.sandboxDir(id);
    let cgroup;
    // A terminate that arrives while the sandbox boots waits for the boot to settle (see terminate()).
    let booted!: () => void;
    this.creating.set(id, new Promise<void>((r) => (booted = r)));
    try {
      await createSandboxDirs(dir, uid, this.scratchFor(shape.memory_mb));
      const binds = storagePlan ? await this.storage!.populate(storagePlan.storage, id, dir, uid) : [];
      cgroup = await this.host.cgroups.create(id, {
        memoryBytes: shape.memory_mb * 1024 * 1024,
        cpu: shape.cpu,
        pidsMax: PIDS_MAX,
      });
      const env: Record<string, string> = {
        PATH: image.path,
        HOME: "/workspace",
        LANG: "C.UTF-8",
        TERM: "xterm-256color",
        ORKESTR_SANDBOX_ID: id,
        ...image.env,
        ...custom?.env,
        ...(body.network === "restricted" ? proxyEnv() : {}),
        ...body.env,
      };
      const limits = { memoryBytes: shape.memory_mb * 1024 * 1024, pidsMax: PIDS_MAX };
      const rootfs = custom ? { path: await this.templates!.acquire(id, custom.id), writable: false } : undefined;
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
      const meter = new SandboxMeter(shape.cpu, Math.ceil(3_600_000 / this.config.sampleMs), {
        cpu_seconds: 0,
        gb_seconds: 0,
      });
      const live: Live = { proc, meter, network, timer: null, env, lock: Promise.resolve() };
      this.live.set(id, live);
      proc.onExit((reason) => void this.onProcessDied(id, reason));
      const started = Date.now();
      this.db
        .prepare("UPDATE sandboxes SET status='running', started_at=?, running_since=?, expires_at=? WHERE id=?")
        .run(started, started, this.deadline(started, started, timeout), id);
      this.armTimer(id);
      meter.sample(cgroup, started);
    } catch (e) {
      await cgroup?.destroy().catch(() => undefined);
      await removeSandboxDirs(dir, this.host.scratchTmpfs);
      await this.storage?.abandon(id).catch(() => undefined);
      await this.templates?.releaseFor(id).catch(() => undefined);
      // What the client may read (the row, its event, the answer) says what failed and where to
      // look; the internal cause (bwrap's or mkfs's words, host paths) goes to the engine log only.
      const err = e instanceof ApiError ? e : ApiError.internal("The sandbox failed to start", e);
      const reason = typeof err.detail === "string" ? err.detail : err.code;
      this.db
        .prepare("UPDATE sandboxes SET status='failed', status_reason=?, terminated_at=? WHERE id=?")
        .run(`start failed: ${reason}`, Date.now(), id);
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
      ...this.storage?.createdEventData(storagePlan?.storage),
    });
    return { view, status: 201 };
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
        if (this.pausedCount(row.account_id) >= this.plan.maxPaused)
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
    this.db
      .prepare("UPDATE sandboxes SET status='failed', status_reason=?, terminated_at=? WHERE id=?")
      .run(oom ? `${reason} (out of memory)` : reason, Date.now(), id);
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
      this.db
        .prepare(
          "UPDATE sandboxes SET status=?, terminated_at=?, status_reason=COALESCE(?, status_reason), expires_at=NULL WHERE id=?",
        )
        .run(finalStatus, Date.now(), reason, row.id);
      if (finalStatus === "terminated") this.events.record(row.id, "sandbox.terminated", reason ? { reason } : {});
    });
  }

  /** Kills the process tree and frees the cgroups, network and files of a sandbox. */
  private async release(id: string): Promise<void> {
    const l = this.live.get(id);
    if (l) {
      if (l.timer) clearTimeout(l.timer);
      l.meter.sample(l.proc.cgroup, Date.now());
      this.persistMeter(id, l.meter);
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
      ?.released(id)
      .catch((e: Error) => console.error(`[engine] releasing the volume of ${id} failed: ${e.message}`));
    // The last sandbox of a template unmounts its view (and removes a deleted template's files).
    await this.templates
      ?.releaseFor(id)
      .catch((e: Error) => console.error(`[engine] releasing the template of ${id} failed: ${e.message}`));
    await removeSandboxDirs(this.sandboxDir(id), this.host.scratchTmpfs);
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
    if (why === "api" && this.pausedCount(row.account_id) >= this.plan.maxPaused) {
      throw new ApiError(
        "snapshot_cap_reached",
        `The ${this.plan.name} plan holds at most ${this.plan.maxPaused} paused sandboxes; resume or terminate one first`,
        { max_paused: this.plan.maxPaused },
      );
    }
    if (!this.host.isolation.cgroups.freezer)
      throw new ApiError("not_implemented", "Pause needs the freezer cgroup, which this machine does not provide");
    return this.serialize(row.id, async () => {
      const l = this.live.get(row.id)!;
      l.meter.sample(l.proc.cgroup, Date.now());
      const frozen = await l.proc.cgroup.freeze();
      if (!frozen) throw new ApiError("internal_error", "The freezer did not freeze every process within 2 s");
      if (l.timer) clearTimeout(l.timer);
      l.timer = null;
      this.persistMeter(row.id, l.meter);
      this.db
        .prepare("UPDATE sandboxes SET status='paused', paused_at=?, expires_at=NULL, running_since=NULL WHERE id=?")
        .run(Date.now(), row.id);
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
    this.checkTimeout(timeout);
    this.checkRamBudget(row.account_id, row.memory_mb);
    this.admission?.admitResume(row.memory_mb);
    return this.serialize(row.id, async () => {
      const l = this.live.get(row.id)!;
      const thawed = await l.proc.cgroup.thaw();
      if (!thawed) throw new ApiError("internal_error", "The freezer did not thaw the sandbox within 2 s");
      l.meter.resetBaseline();
      const now = Date.now();
      this.db
        .prepare(
          "UPDATE sandboxes SET status='running', paused_at=NULL, running_since=?, timeout_seconds=?, expires_at=? WHERE id=?",
        )
        .run(now, timeout, this.deadline(now, now, timeout), row.id);
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
    this.checkTimeout(seconds);
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
    this.db
      .prepare("UPDATE sandboxes SET timeout_seconds=?, expires_at=? WHERE id=?")
      .run(seconds, this.deadline(now, row.running_since ?? now, seconds), row.id);
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
    if (body.metadata !== undefined)
      this.db.prepare("UPDATE sandboxes SET metadata=? WHERE id=?").run(JSON.stringify(body.metadata), row.id);
    if (body.auto_resume !== undefined)
      this.db.prepare("UPDATE sandboxes SET auto_resume=? WHERE id=?").run(body.auto_resume ? 1 : 0, row.id);
    if (body.on_timeout !== undefined)
      this.db.prepare("UPDATE sandboxes SET on_timeout=? WHERE id=?").run(body.on_timeout, row.id);
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

  /** Clean shutdown: terminate everything this engine started and leave nothing behind. */
  async shutdown(): Promise<void> {
    this.closing = true;
    if (this.sampler) clearInterval(this.sampler);
    const ids = [...this.live.keys()];
    await Promise.all(
      ids.map(async (id) => {
        await this.release(id);
        this.db
          .prepare(
            "UPDATE sandboxes SET status='terminated', terminated_at=?, status_reason=?, expires_at=NULL WHERE id=?",
          )
          .run(Date.now(), "engine shut down", id);
        this.events.record(id, "sandbox.terminated", { reason: "engine_shutdown" });
      }),
    );
  }
}

function gone(row: SandboxRow): ApiError {
  if (row.status === "failed")
    return new ApiError("sandbox_not_running", `Sandbox ${row.id} failed: ${row.status_reason ?? "unknown reason"}`);
  return new ApiError(
    "sandbox_terminated",
    `Sandbox ${row.id} was ${row.status === "expired" ? "terminated when its countdown ended" : "terminated"}`,
  );
}

function proxyEnv(): Record<string, string> {
  const url = "http://127.0.0.1:3128";
  return {
    HTTPS_PROXY: url,
    https_proxy: url,
    HTTP_PROXY: url,
    http_proxy: url,
    NO_PROXY: "localhost,127.0.0.1,::1",
    no_proxy: "localhost,127.0.0.1,::1",
  };
}
