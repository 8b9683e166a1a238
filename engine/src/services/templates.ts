import { EventEmitter } from "node:events";
import fs from "node:fs";
import path from "node:path";
import type { EngineConfig } from "../config.js";
import { ApiError } from "../errors.js";
import { newId } from "../lib/ids.js";
import { iso, isoOrNull } from "../lib/time.js";
import { PLANS, type Plan } from "../plans.js";
import { buildUid, type Host } from "../runtime/host.js";
import { TemplateLayers } from "../runtime/layers.js";
import { TemplateBuild, type BuildLine, type BuildOutcome } from "../runtime/template-build.js";
import { TEMPLATE_ALIASES, type BaseImage } from "../runtime/templates.js";
import type { Db } from "../store/db.js";
import { pageNewestFirst } from "../store/paging.js";
import type { HostAdmission } from "./admission.js";
import { freeSlot, nextBuild, type SlotHolder } from "./build-queue.js";
import type { EventLog } from "./events.js";

export type TemplateStatus = "queued" | "building" | "ready" | "failed";
const FINISHED: TemplateStatus[] = ["ready", "failed"];

interface TemplateRow {
  id: string;
  account_id: string;
  name: string;
  base_image: string;
  steps: string;
  env: string;
  status: TemplateStatus;
  error: string | null;
  size_mb: number | null;
  created_at: number;
  started_at: number | null;
  ready_at: number | null;
  finished_at: number | null;
  deleted_at: number | null;
}

export interface TemplateError {
  step_index: number | null;
  step: string | null;
  exit_code: number | null;
  output: string;
}

export interface TemplateView {
  id: string;
  name: string;
  base_image: string;
  steps: string[];
  /** Names only: values may be secrets and are never echoed (like a sandbox's env_keys). */
  env_keys: string[];
  status: TemplateStatus;
  builtin: false;
  size_mb: number | null;
  error: TemplateError | null;
  created_at: string;
  started_at: string | null;
  ready_at: string | null;
  finished_at: string | null;
}

export interface LogLine {
  seq: number;
  t: string;
  step_index: number | null;
  stream: string;
  data: string;
}

interface LogRow {
  seq: number;
  t: number;
  step_index: number | null;
  stream: string;
  data: string;
}

export interface FinalFrame {
  is_final: true;
  status: TemplateStatus;
  error: TemplateError | null;
  size_mb: number | null;
}

export interface CreateTemplateInput {
  name: string;
  base_image: string;
  steps: string[];
  env: Record<string, string>;
}

/** Lines one build may store; past it stdout/stderr are dropped (engine lines and the error tail stay). */
export const MAX_LOG_LINES = 20_000;
/** Build logs are kept this long after the build finished (GET /v1/templates/:id/logs: 7 days). */
const LOG_RETENTION_MS = 7 * 24 * 3600_000;

const toLine = (r: LogRow): LogLine => ({
  seq: r.seq,
  t: iso(r.t),
  step_index: r.step_index,
  stream: r.stream,
  data: r.data,
});

/** A build holding a slot: its template, account, slot (and so host uid) and the promise of its end. */
interface RunningBuild extends SlotHolder {
  id: string;
  build: TemplateBuild;
  done: Promise<void>;
}

/**
 * Custom templates (/v1/templates): a base image plus shell steps, built into a real image layer
 * in one of a few build slots (fairly between accounts: services/build-queue.ts), then used by sandboxes read-only. Sandboxes hold a reference to the layer
 * while they run, so deleting a template in use hides it at once and removes its files when the
 * last sandbox using it is released.
 *
 * Decisions the contract leaves open:
 * - Build network: `restricted` by default (HTTPS to the default egress list through the same
 *   allow-listing proxy as restricted sandboxes, so pip/npm installs work); ORKESTR_ENGINE_TEMPLATE_BUILD_NETWORK=off
 *   gives builds no network at all. Steps run as uid 0 with HOME=/root, every capability dropped.
 * - Sandboxes see the layer read-only (like a built-in image's /usr); /workspace and /tmp stay theirs.
 * - Template env: applied to the build steps and as defaults for its sandboxes (create-time env wins); only names are echoed.
 * - Restart: a build cut off by a restart or shutdown fails with that reason; queued builds run on the next start.
 * - The cap counts every template not deleted (failed ones too: delete them to free a slot).
 */
export class TemplateService {
  readonly layers: TemplateLayers;
  private readonly plan: Plan;
  /** Template ids waiting for a slot, oldest first. */
  private queue: string[] = [];
  /** Builds running now, by template id; each holds one slot (and its host uid). */
  private running = new Map<string, RunningBuild>();
  private bus = new EventEmitter();
  private nextSeq = new Map<string, number>();
  /** sandbox id → template id, for every sandbox whose root is a template's view. */
  private users = new Map<string, string>();
  /** Per-template serialization of mount/unmount/remove. */
  private locks = new Map<string, Promise<unknown>>();
  private mountedViews = new Set<string>();
  private closing = false;
  constructor(
    private readonly config: EngineConfig,
    private readonly db: Db,
    private readonly host: Host,
    private readonly events: EventLog,
    /** The machine's disk, RAM and pids for builds (services/admission.ts). */
    private readonly admission: HostAdmission,
  ) {
    this.plan = PLANS[config.plan];
    this.layers = new TemplateLayers(path.join(config.root, "templates"), host);
    this.bus.setMaxListeners(0);
  }

  /** Why this machine cannot build templates, or null when it can. */
  unavailable(): string | null {
    if (this.host.isolation.mode === "unavailable")
      return `sandboxing is unavailable on this machine: ${this.host.isolation.degraded[0] ?? "see limits.isolation"}`;
    // Overlay mounts must vanish with the engine (its private mount namespace, as root), and a
    // build's root must not be the host's (idmapped overlays): runtime/host.ts says which is missing.
    return this.host.templates;
  }

  /**
   * After a restart: a build the previous run was in the middle of is failed with a clear reason
   * (its sandbox died with that run), queued builds are queued again, deleted templates' files go.
   */
  recoverAfterRestart(): { failed: number; requeued: number } {
    const now = Date.now();
    const building = this.db
      .prepare("SELECT * FROM templates WHERE status = 'building' AND deleted_at IS NULL")
      .all() as TemplateRow[];
    for (const row of building) {
      const error: TemplateError = {
        step_index: null,
        step: null,
        exit_code: null,
        output:
          "The engine restarted while this template was building; its build sandbox died with it. Build the template again (templates are immutable: create a new one).",
      };
      this.db
        .prepare("UPDATE templates SET status='failed', error=?, finished_at=? WHERE id=?")
        .run(JSON.stringify(error), now, row.id);
      this.appendLog(row.id, {
        step_index: null,
        stream: "system",
        data: "build interrupted: the engine restarted during the build\n",
      });
      fs.rmSync(this.layers.templateDir(row.id), { recursive: true, force: true });
      this.events.recordFor(row.account_id, "template.build_finished", { template: this.view(this.getRow(row.id)) });
    }
    // A template an adopted sandbox runs on (adoptUser) keeps its files and its mounted view: a
    // deleted one is removed when that sandbox releases it.
    const inUse = new Set(this.users.values());
    const gone = this.db.prepare("SELECT id FROM templates WHERE deleted_at IS NOT NULL").all() as { id: string }[];
    for (const { id } of gone) {
      if (inUse.has(id)) continue;
      if (fs.existsSync(this.layers.templateDir(id)))
        fs.rmSync(this.layers.templateDir(id), { recursive: true, force: true });
    }
    // Leftovers of a build the last run never finished tidying (nothing of a build is mounted after
    // a restart; a view is, while an adopted sandbox runs on it).
    for (const row of this.db
      .prepare("SELECT id FROM templates WHERE status = 'ready' AND deleted_at IS NULL")
      .all() as { id: string }[]) {
      for (const sub of inUse.has(row.id) ? ["work", "rw", "build"] : ["work", "rw", "build", "view"])
        fs.rmSync(path.join(this.layers.templateDir(row.id), sub), { recursive: true, force: true });
    }
    this.db
      .prepare(
        "DELETE FROM template_logs WHERE template_id IN (SELECT id FROM templates WHERE finished_at IS NOT NULL AND finished_at < ?)",
      )
      .run(now - LOG_RETENTION_MS);
    const queued = this.db
      .prepare("SELECT id FROM templates WHERE status = 'queued' AND deleted_at IS NULL ORDER BY created_at")
      .all() as { id: string }[];
    this.queue.push(...queued.map((q) => q.id));
    return { failed: building.length, requeued: queued.length };
  }

  /** Starts building whatever recoverAfterRestart queued. */
  start(): void {
    this.kick();
  }

  /** One of the account's templates (not deleted), by id (any case) or by name. */
  private row(account: string, idOrName: string): TemplateRow | undefined {
    return this.db
      .prepare(
        "SELECT * FROM templates WHERE account_id = ? AND deleted_at IS NULL AND (id = ? COLLATE NOCASE OR name = ?) ORDER BY id = ? COLLATE NOCASE DESC LIMIT 1",
      )
      .get(account, idOrName, idOrName, idOrName) as TemplateRow | undefined;
  }

  /** Any template by exact id, deleted ones too: for the engine's own build and mount work. */
  private getRow(id: string): TemplateRow {
    const row = this.db.prepare("SELECT * FROM templates WHERE id = ?").get(id) as TemplateRow | undefined;
    if (!row) throw new ApiError("template_not_found", `Template ${id} not found`);
    return row;
  }

  find(account: string, idOrName: string): TemplateRow {
    const row = this.row(account, idOrName);
    if (!row) throw new ApiError("template_not_found", `Template "${idOrName}" not found`);
    return row;
  }

  view(row: TemplateRow): TemplateView {
    return {
      id: row.id,
      name: row.name,
      base_image: row.base_image,
      steps: JSON.parse(row.steps) as string[],
      env_keys: Object.keys(JSON.parse(row.env) as Record<string, string>),
      status: row.status,
      builtin: false,
      size_mb: row.size_mb,
      error: row.error ? (JSON.parse(row.error) as TemplateError) : null,
      created_at: iso(row.created_at),
      started_at: isoOrNull(row.started_at),
      ready_at: isoOrNull(row.ready_at),
      finished_at: isoOrNull(row.finished_at),
    };
  }

  get(account: string, idOrName: string): TemplateView {
    return this.view(this.find(account, idOrName));
  }

  count(account: string): number {
    return (
      this.db
        .prepare("SELECT COUNT(*) AS n FROM templates WHERE account_id = ? AND deleted_at IS NULL")
        .get(account) as { n: number }
    ).n;
  }

  /** Newest first, cursor-paged like sandboxes; built-ins first on the first page when asked for. */
  list(
    account: string,
    opts: { includeBuiltin: boolean; limit: number; cursor?: string },
  ): { items: unknown[]; next: string | null } {
    const page = pageNewestFirst<TemplateRow>(
      this.db,
      "templates",
      [["account_id = ?", account], ["deleted_at IS NULL"]],
      opts,
    );
    const items: unknown[] = page.items.map((r) => this.view(r));
    if (opts.includeBuiltin && !opts.cursor) {
      const builtins = [...this.host.images.values()].map((i) => ({
        id: i.id,
        name: i.id,
        builtin: true,
        status: "ready",
        description: i.description,
        available: i.available,
      }));
      items.unshift(...builtins);
    }
    return { items, next: page.next };
  }

  create(account: string, input: CreateTemplateInput): TemplateView {
    const why = this.unavailable();
    if (why) throw new ApiError("not_implemented", `Custom templates cannot be built here: ${why}`);
    if (this.closing) throw new ApiError("fleet_full", "The engine is shutting down", {}, { "Retry-After": "5" });
    const baseId = TEMPLATE_ALIASES[input.base_image] ?? input.base_image;
    const image = this.host.images.get(baseId);
    if (!image)
      throw new ApiError(
        "base_image_not_found",
        `Base image "${input.base_image}" not found. Base images: ${[...this.host.images.keys()].join(", ")}`,
      );
    if (!image.available)
      throw new ApiError(
        "base_image_not_found",
        `Base image "${input.base_image}" is not available on this machine: ${image.maps_to}`,
      );
    if (this.host.images.has(input.name) || TEMPLATE_ALIASES[input.name] || /^tmpl_/i.test(input.name)) {
      throw new ApiError("validation_error", [
        {
          loc: ["body", "name"],
          msg: "name must not be a base image id or start with tmpl_ (sandboxes resolve templates by id or name)",
          type: "value_error",
        },
      ]);
    }
    const used = this.count(account);
    if (used >= this.plan.maxTemplates) {
      throw new ApiError(
        "template_cap_reached",
        `The ${this.plan.name} plan holds at most ${this.plan.maxTemplates} templates; delete one first`,
        { max_templates: this.plan.maxTemplates },
      );
    }
    if (this.row(account, input.name))
      throw new ApiError("template_name_taken", `A template named "${input.name}" already exists`);
    this.admission.admitTemplate();
    const id = newId("tmpl");
    this.db
      .prepare(
        "INSERT INTO templates(id, account_id, name, base_image, steps, env, status, created_at) VALUES (?, ?, ?, ?, ?, ?, 'queued', ?)",
      )
      .run(id, account, input.name, baseId, JSON.stringify(input.steps), JSON.stringify(input.env), Date.now());
    this.appendLog(id, {
      step_index: null,
      stream: "system",
      data: `queued: ${input.steps.length} step(s) on ${baseId}\n`,
    });
    this.queue.push(id);
    this.kick();
    return this.view(this.getRow(id));
  }

  /** Starts queued builds while slots are free (services/build-queue.ts decides which, fairly). */
  private kick(): void {
    if (this.closing) return;
    for (;;) {
      const slot = freeSlot(this.config.templateBuilds, this.running.values());
      if (slot === null) return;
      const next = nextBuild(this.queue, {
        running: [...this.running.values()],
        perAccount: this.config.templateBuildsPerAccount,
        row: (id) =>
          this.db
            .prepare("SELECT * FROM templates WHERE id = ? AND deleted_at IS NULL AND status = 'queued'")
            .get(id) as TemplateRow | undefined,
      });
      this.queue = next.queue;
      if (!next.row) return;
      this.startBuild(next.row, slot);
    }
  }

  private startBuild(row: TemplateRow, slot: number): void {
    const id = row.id;
    const image = this.host.images.get(row.base_image);
    // Marked building synchronously, so a create that starts the build right away answers "building".
    this.db.prepare("UPDATE templates SET status='building', started_at=? WHERE id=?").run(Date.now(), id);
    const build = new TemplateBuild(
      this.host,
      this.config,
      this.layers,
      {
        id,
        uid: buildUid(this.host.uidBase, slot),
        image: image!,
        steps: JSON.parse(row.steps) as string[],
        env: JSON.parse(row.env) as Record<string, string>,
      },
      (line) => this.appendLog(id, line),
    );
    const buildId = id;
    const done = (
      image
        ? build.run()
        : Promise.resolve<BuildOutcome>({
            ok: false,
            error: { step_index: null, step: null, exit_code: null, output: `base image ${row.base_image} is gone` },
            reason: "base image gone",
          })
    )
      .catch((e: Error): BuildOutcome => ({
        ok: false,
        error: { step_index: null, step: null, exit_code: null, output: e.message },
        reason: e.message,
      }))
      .then((outcome) => this.finish(buildId, outcome))
      .catch((e: Error) => console.error(`[engine] template ${buildId}: finishing the build failed: ${e.message}`))
      .finally(() => {
        this.running.delete(buildId);
        this.kick();
      });
    this.running.set(id, { id, account: row.account_id, slot, build, done });
  }

  private async finish(id: string, outcome: BuildOutcome): Promise<void> {
    const now = Date.now();
    const row = this.getRow(id);
    if (outcome.ok) {
      this.db
        .prepare("UPDATE templates SET status='ready', size_mb=?, ready_at=?, finished_at=? WHERE id=?")
        .run(outcome.size_mb, now, now, id);
    } else {
      this.db
        .prepare("UPDATE templates SET status='failed', error=?, finished_at=? WHERE id=?")
        .run(JSON.stringify(outcome.error), now, id);
      this.appendLog(id, {
        step_index: outcome.error.step_index,
        stream: "system",
        data: `build failed: ${outcome.reason}\n`,
      });
    }
    // A failed build's partial layer is of no use; a deleted template's files go once nothing uses them.
    if (!outcome.ok || row.deleted_at !== null)
      await this.withLock(id, () => this.layers.remove(id)).catch(() => undefined);
    if (row.deleted_at !== null) this.db.prepare("DELETE FROM template_logs WHERE template_id = ?").run(id);
    const view = this.view(this.getRow(id));
    this.nextSeq.delete(id);
    this.bus.emit(`final:${id}`, {
      is_final: true,
      status: view.status,
      error: view.error,
      size_mb: view.size_mb,
    } satisfies FinalFrame);
    if (row.deleted_at === null) this.events.recordFor(row.account_id, "template.build_finished", { template: view });
  }

  private appendLog(id: string, line: BuildLine): void {
    let seq = this.nextSeq.get(id);
    if (seq === undefined) {
      const max = this.db
        .prepare("SELECT COALESCE(MAX(seq), 0) AS m FROM template_logs WHERE template_id = ?")
        .get(id) as { m: number };
      seq = max.m + 1;
    }
    if (seq > MAX_LOG_LINES && line.stream !== "system") return;
    if (seq === MAX_LOG_LINES && line.stream !== "system")
      line = {
        step_index: line.step_index,
        stream: "system",
        data: `[log truncated after ${MAX_LOG_LINES} lines; the failing step's output tail is kept in error.output]\n`,
      };
    const t = Date.now();
    this.db
      .prepare("INSERT INTO template_logs(template_id, seq, t, step_index, stream, data) VALUES (?, ?, ?, ?, ?, ?)")
      .run(id, seq, t, line.step_index, line.stream, line.data);
    this.nextSeq.set(id, seq + 1);
    this.bus.emit(`line:${id}`, toLine({ seq, t, step_index: line.step_index, stream: line.stream, data: line.data }));
  }

  /** One page of build log, from `cursor` (the first seq wanted) on. */
  logs(
    account: string,
    idOrName: string,
    cursor: number,
    limit: number,
  ): { template_id: string; status: TemplateStatus; lines: LogLine[]; next_cursor: number; done: boolean } {
    const row = this.find(account, idOrName);
    const rows = this.db
      .prepare(
        "SELECT seq, t, step_index, stream, data FROM template_logs WHERE template_id = ? AND seq >= ? ORDER BY seq LIMIT ?",
      )
      .all(row.id, cursor, limit + 1) as LogRow[];
    const lines = rows.slice(0, limit).map(toLine);
    const more = rows.length > limit;
    return {
      template_id: row.id,
      status: row.status,
      lines,
      next_cursor: lines.length ? lines[lines.length - 1]!.seq + 1 : cursor,
      done: FINISHED.includes(row.status) && !more,
    };
  }

  /**
   * Follows a build's log: every line from `cursor` on, then the final frame. Listeners are
   * attached before the backlog is read, so no line falls between the two.
   */
  follow(
    account: string,
    idOrName: string,
    cursor: number,
    onLine: (l: LogLine) => void,
    onFinal: (f: FinalFrame) => void,
  ): () => void {
    const row = this.find(account, idOrName);
    const id = row.id;
    let last = cursor - 1;
    let replaying = true;
    const pending: (LogLine | FinalFrame)[] = [];
    let ended = false;
    const deliver = (item: LogLine | FinalFrame) => {
      if (ended) return;
      if ("is_final" in item) {
        ended = true;
        stop();
        onFinal(item);
      } else if (item.seq > last) {
        last = item.seq;
        onLine(item);
      }
    };
    const lineListener = (l: LogLine) => (replaying ? pending.push(l) : deliver(l));
    const finalListener = (f: FinalFrame) => (replaying ? pending.push(f) : deliver(f));
    const stop = () => {
      this.bus.off(`line:${id}`, lineListener);
      this.bus.off(`final:${id}`, finalListener);
    };
    this.bus.on(`line:${id}`, lineListener);
    this.bus.on(`final:${id}`, finalListener);
    for (;;) {
      const page = this.db
        .prepare(
          "SELECT seq, t, step_index, stream, data FROM template_logs WHERE template_id = ? AND seq > ? ORDER BY seq LIMIT 500",
        )
        .all(id, last) as LogRow[];
      for (const r of page) deliver(toLine(r));
      if (page.length < 500) break;
    }
    replaying = false;
    for (const item of pending) deliver(item);
    if (!ended) {
      const now = this.getRow(id);
      if (FINISHED.includes(now.status)) {
        deliver({
          is_final: true,
          status: now.status,
          error: now.error ? (JSON.parse(now.error) as TemplateError) : null,
          size_mb: now.size_mb,
        });
      }
    }
    return stop;
  }

  /**
   * DELETE: the template disappears at once (its name is free again). A queued build is dropped, a
   * running one cancelled; the files go now, or when the last sandbox using the template ends.
   */
  async delete(account: string, idOrName: string): Promise<void> {
    const row = this.find(account, idOrName);
    this.db.prepare("UPDATE templates SET deleted_at=? WHERE id=?").run(Date.now(), row.id);
    this.queue = this.queue.filter((q) => q !== row.id);
    const running = this.running.get(row.id);
    if (running) {
      // finish() removes the files once the build sandbox is gone.
      running.build.cancel("the template was deleted during its build");
      return;
    }
    if (row.status === "queued") {
      this.bus.emit(`final:${row.id}`, {
        is_final: true,
        status: "failed",
        error: {
          step_index: null,
          step: null,
          exit_code: null,
          output: "the template was deleted before its build started",
        },
        size_mb: null,
      } satisfies FinalFrame);
    }
    if (![...this.users.values()].includes(row.id)) await this.purge(row.id);
  }

  private async purge(id: string): Promise<void> {
    await this.withLock(id, async () => {
      if (this.mountedViews.has(id)) {
        await this.layers.unmountView(id, this.imageOf(id));
        this.mountedViews.delete(id);
      }
      await this.layers.remove(id);
    });
    this.db.prepare("DELETE FROM template_logs WHERE template_id = ?").run(id);
  }

  private imageOf(id: string): BaseImage {
    const image = this.host.images.get(this.getRow(id).base_image);
    if (!image) throw new Error(`template ${id}: base image ${this.getRow(id).base_image} is gone`);
    return image;
  }

  private withLock<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(id) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const settled = next.catch(() => undefined);
    this.locks.set(id, settled);
    void settled.then(() => {
      if (this.locks.get(id) === settled) this.locks.delete(id);
    });
    return next;
  }

  // ---- used by SandboxService ----

  /**
   * What a sandbox create needs to know of a custom template (by id or name): undefined when there
   * is none, 409 template_not_ready while it builds or after it failed.
   */
  forSandbox(
    account: string,
    requested: string,
  ): { id: string; image: BaseImage; env: Record<string, string> } | undefined {
    const row = this.row(account, requested);
    if (!row) return undefined;
    if (row.status !== "ready") {
      const why =
        row.status === "failed"
          ? "its build failed; see GET /v1/templates/{id} for the failing step"
          : `it is still ${row.status}`;
      throw new ApiError("template_not_ready", `Template ${row.name} (${row.id}) is not ready: ${why}`, {
        template_status: row.status,
      });
    }
    const image = this.host.images.get(row.base_image);
    if (!image?.available)
      throw new ApiError(
        "template_not_found",
        `Template ${row.name}'s base image ${row.base_image} cannot run on this machine`,
      );
    return { id: row.id, image, env: JSON.parse(row.env) as Record<string, string> };
  }

  /** Mounts the template's read-only root (shared by its sandboxes) and records the sandbox as a user. */
  async acquire(sandboxId: string, templateId: string): Promise<string> {
    return this.withLock(templateId, async () => {
      const row = this.getRow(templateId);
      if (row.deleted_at !== null || row.status !== "ready")
        throw new ApiError("template_not_found", `Template ${templateId} was deleted`);
      const root = this.layers.viewRoot(templateId);
      if (!this.mountedViews.has(templateId)) {
        await this.layers.mountView(templateId, this.imageOf(templateId));
        this.mountedViews.add(templateId);
      }
      this.users.set(sandboxId, templateId);
      return root;
    });
  }

  /** The sandbox no longer uses its template: the last user unmounts it (and removes a deleted one's files). */
  async releaseFor(sandboxId: string): Promise<void> {
    const templateId = this.users.get(sandboxId);
    if (!templateId) return;
    this.users.delete(sandboxId);
    if ([...this.users.values()].includes(templateId)) return;
    await this.withLock(templateId, async () => {
      if ([...this.users.values()].includes(templateId) || !this.mountedViews.has(templateId)) return;
      await this.layers.unmountView(templateId, this.imageOf(templateId));
      this.mountedViews.delete(templateId);
    });
    if (this.getRow(templateId).deleted_at !== null)
      await this.purge(templateId).catch((e: Error) =>
        console.error(`[engine] removing deleted template ${templateId}: ${e.message}`),
      );
  }

  /**
   * After a restart, before recoverAfterRestart: an adopted sandbox (services/sandboxes.ts) still
   * runs on its template's view, which the holders' mount namespace kept mounted. It becomes a user
   * again, so the view stays mounted (and a deleted template's files stay) until it is released.
   */
  async adoptUser(sandboxId: string, templateId: string): Promise<void> {
    const row = this.getRow(templateId);
    if (!(await this.layers.viewMounted(templateId, this.imageOf(templateId))))
      throw new Error(`its template ${row.name}'s root is no longer mounted`);
    this.mountedViews.add(templateId);
    this.users.set(sandboxId, templateId);
  }

  /** The views adopted sandboxes run on: the restart's sweep of leftover mounts keeps them. */
  viewRootsInUse(): string[] {
    return [...new Set(this.users.values())].map((id) => this.layers.viewRoot(id));
  }

  /** Sandboxes currently using a template (tests and the delete path read it). */
  usersOf(templateId: string): number {
    return [...this.users.values()].filter((t) => t === templateId).length;
  }

  /**
   * Clean shutdown, after the sandboxes are gone: a running build is stopped and failed with a
   * clear reason (queued ones stay queued for the next run), and every mount is released (but the
   * views of sandboxes an upgrade stop keeps).
   */
  async shutdown(opts: { keep?: boolean } = {}): Promise<void> {
    this.closing = true;
    const running = [...this.running.values()];
    for (const r of running) r.build.cancel("the engine shut down during the build; build the template again");
    await Promise.all(running.map((r) => r.done));
    // An upgrade stop: the sandboxes still using a view keep running, and the next engine adopts
    // them on it (adoptUser), so it stays mounted in the namespace their holders keep.
    const kept = opts.keep ? new Set(this.users.values()) : new Set<string>();
    for (const id of [...this.mountedViews].filter((v) => !kept.has(v))) {
      await this.withLock(id, async () => {
        await this.layers.unmountView(id, this.imageOf(id)).catch(() => undefined);
        this.mountedViews.delete(id);
      });
    }
    this.users.clear();
  }
}
