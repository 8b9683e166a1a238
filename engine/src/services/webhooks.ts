import { createHmac } from "node:crypto";
import http from "node:http";
import https from "node:https";
import type { EngineConfig } from "../config.js";
import { ApiError } from "../errors.js";
import { newId, newSecret } from "../lib/ids.js";
import { iso, isoOrNull } from "../lib/time.js";
import type { Db } from "../store/db.js";
import type { EngineEvent, EventLog } from "./events.js";
import type { SandboxService } from "./sandboxes.js";
import { connectPlan, REFUSED_CODE } from "./webhook-guard.js";
import { WEBHOOK_EVENT_TYPES } from "../../../lib/orkestr/webhook-events.js";

export { WEBHOOK_EVENT_TYPES };
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
/** What an omitted `event_types` subscribes to: every event the engine records (seed 003: "omit for all events"). */
const ALL_EVENTS = WEBHOOK_EVENT_TYPES.filter((t) => t !== "webhook.test");
const FANNED_OUT = new Set<string>(ALL_EVENTS);

/** First attempt plus 3 retries (seed 003: "retry 3 times, 10 s apart"). */
export const MAX_ATTEMPTS = 4;
/** Consecutive failed deliveries after which a webhook disables itself (seed 003). */
export const AUTO_DISABLE_AFTER = 20;
/** A receiver answers within this long or the attempt failed (webhook deliveries: any 2xx within 10 s). */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** How much of a receiver's answer the delivery log keeps. */
export const RESPONSE_EXCERPT_BYTES = 2048;
/** Attempts in flight at once, over all webhooks: a flood of events queues instead of opening sockets unboundedly. */
const MAX_IN_FLIGHT = 16;
/** Finished deliveries are kept this long in the log. */
const DELIVERY_RETENTION_MS = 30 * 86_400_000;
const USER_AGENT = "orkestr-webhooks (baton-engine)";

interface WebhookRow {
  id: string;
  account_id: string;
  url: string;
  event_types: string;
  description: string | null;
  secret: string;
  enabled: number;
  consecutive_failures: number;
  disabled_reason: string | null;
  created_at: number;
  updated_at: number;
}

type DeliveryStatus = "pending" | "succeeded" | "failed";

interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  body: string;
  status: DeliveryStatus;
  attempts: number;
  response_status: number | null;
  response_body_excerpt: string | null;
  error: string | null;
  duration_ms: number | null;
  redelivered_from: string | null;
  created_at: number;
  last_attempt_at: number | null;
  next_attempt_at: number | null;
}

export interface WebhookView {
  id: string;
  url: string;
  event_types: string[];
  description: string | null;
  enabled: boolean;
  consecutive_failures: number;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface DeliveryView {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  max_attempts: number;
  response_status: number | null;
  duration_ms: number | null;
  error: string | null;
  redelivered_from: string | null;
  created_at: string;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
}

export interface WebhookInput {
  url: string;
  event_types?: WebhookEventType[];
  description?: string | null;
  enabled?: boolean;
}

const webhookView = (r: WebhookRow): WebhookView => ({
  id: r.id,
  url: r.url,
  event_types: JSON.parse(r.event_types) as string[],
  description: r.description,
  enabled: !!r.enabled,
  consecutive_failures: r.consecutive_failures,
  disabled_reason: r.disabled_reason,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

const deliveryView = (r: DeliveryRow): DeliveryView => ({
  id: r.id,
  webhook_id: r.webhook_id,
  event_id: r.event_id,
  event_type: r.event_type,
  status: r.status,
  attempts: r.attempts,
  max_attempts: MAX_ATTEMPTS,
  response_status: r.response_status,
  duration_ms: r.duration_ms,
  error: r.error,
  redelivered_from: r.redelivered_from,
  created_at: iso(r.created_at),
  last_attempt_at: isoOrNull(r.last_attempt_at),
  next_attempt_at: isoOrNull(r.next_attempt_at),
});

const uniqueTypes = (types: readonly string[]) => JSON.stringify([...new Set(types)]);

/**
 * Webhooks: subscriptions, the signed outgoing deliveries and their log. Events come from the
 * EventLog bus; each matching webhook gets a delivery row in SQLite at once (so nothing is lost
 * across a restart), and an in-process dispatcher sends due rows in the background, so the
 * request that caused an event never waits on a receiver.
 */
export class WebhookService {
  private inFlight = new Map<string, { controller: AbortController; webhookId: string; done: Promise<void> }>();
  private timer: NodeJS.Timeout | null = null;
  private pruner: NodeJS.Timeout | null = null;
  private readonly unsubscribe: () => void;
  /** Deliveries are queued from construction on, but sent only once start() runs. */
  private started = false;
  private closed = false;

  constructor(
    private readonly config: EngineConfig,
    private readonly db: Db,
    private readonly events: EventLog,
    private readonly sandboxes: SandboxService,
    private readonly log: (msg: string) => void,
  ) {
    // Subscribed at once, so events recorded while the engine recovers (a build or a volume move
    // that the restart finished) are queued like any other.
    this.unsubscribe = this.events.subscribe((e) => this.onEvent(e));
  }

  /** Starts sending: resumes deliveries an earlier run left pending, then whatever gets queued. */
  start(): void {
    this.started = true;
    this.prune();
    this.pruner = setInterval(() => this.prune(), 3_600_000);
    this.pruner.unref();
    this.kick();
  }

  /** Stops sending. Attempts cut short are not counted: their rows stay pending for the next run. */
  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe();
    if (this.timer) clearTimeout(this.timer);
    if (this.pruner) clearInterval(this.pruner);
    const running = [...this.inFlight.values()];
    for (const f of running) f.controller.abort();
    await Promise.allSettled(running.map((f) => f.done));
  }

  // ---- subscriptions ----

  /** One of the account's webhooks. */
  private row(account: string, id: string): WebhookRow {
    const row = this.db
      .prepare("SELECT * FROM webhooks WHERE id = ? COLLATE NOCASE AND account_id = ?")
      .get(id, account) as WebhookRow | undefined;
    if (!row) throw new ApiError("webhook_not_found", `Webhook ${id} not found`);
    return row;
  }

  create(account: string, input: WebhookInput): { view: WebhookView; secret: string } {
    const id = newId("wh");
    const secret = newSecret("whsec", 24);
    const now = Date.now();
    this.db
      .prepare(
        "INSERT INTO webhooks(id, account_id, url, event_types, description, secret, enabled, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      )
      .run(
        id,
        account,
        input.url,
        uniqueTypes(input.event_types ?? ALL_EVENTS),
        input.description ?? null,
        secret,
        input.enabled === false ? 0 : 1,
        now,
        now,
      );
    return { view: this.get(account, id), secret };
  }

  get(account: string, id: string): WebhookView {
    return webhookView(this.row(account, id));
  }

  list(account: string, page: { limit: number; cursor?: string }): { items: WebhookView[]; next: string | null } {
    const rows = this.db
      .prepare(
        `SELECT * FROM webhooks WHERE account_id = ?${page.cursor ? " AND id < ?" : ""} ORDER BY id DESC LIMIT ?`,
      )
      .all(account, ...(page.cursor ? [page.cursor] : []), page.limit + 1) as WebhookRow[];
    const items = rows.slice(0, page.limit);
    return { items: items.map(webhookView), next: rows.length > page.limit ? items[items.length - 1]!.id : null };
  }

  update(account: string, id: string, patch: Partial<WebhookInput>): WebhookView {
    const row = this.row(account, id);
    const now = Date.now();
    this.db.transaction(() => {
      if (patch.url !== undefined) this.db.prepare("UPDATE webhooks SET url = ? WHERE id = ?").run(patch.url, row.id);
      if (patch.event_types !== undefined)
        this.db.prepare("UPDATE webhooks SET event_types = ? WHERE id = ?").run(uniqueTypes(patch.event_types), row.id);
      if (patch.description !== undefined)
        this.db.prepare("UPDATE webhooks SET description = ? WHERE id = ?").run(patch.description, row.id);
      this.db.prepare("UPDATE webhooks SET updated_at = ? WHERE id = ?").run(now, row.id);
      if (patch.enabled !== undefined) this.applyEnabled(row.id, patch.enabled, "disabled by request");
    })();
    return this.get(account, row.id);
  }

  setEnabled(account: string, id: string, enabled: boolean): WebhookView {
    const row = this.row(account, id);
    this.db.transaction(() => this.applyEnabled(row.id, enabled, "disabled by request"))();
    return this.get(account, row.id);
  }

  /**
   * Enabling re-arms a webhook and forgets its failure streak. Disabling stops it: deliveries
   * still queued fail at once rather than flooding the receiver when it is enabled again.
   */
  private applyEnabled(id: string, enabled: boolean, reason: string): void {
    const now = Date.now();
    if (enabled) {
      this.db
        .prepare(
          "UPDATE webhooks SET enabled = 1, consecutive_failures = 0, disabled_reason = NULL, updated_at = ? WHERE id = ?",
        )
        .run(now, id);
      return;
    }
    this.db
      .prepare("UPDATE webhooks SET enabled = 0, disabled_reason = ?, updated_at = ? WHERE id = ? AND enabled = 1")
      .run(reason, now, id);
    this.db
      .prepare(
        "UPDATE webhook_deliveries SET status = 'failed', error = ?, next_attempt_at = NULL WHERE webhook_id = ? AND status = 'pending'",
      )
      .run(`cancelled: the webhook was ${reason}`, id);
  }

  /** A new secret; later attempts, retries of queued deliveries included, are signed with it. */
  rotateSecret(account: string, id: string): { view: WebhookView; secret: string } {
    const row = this.row(account, id);
    const secret = newSecret("whsec", 24);
    this.db.prepare("UPDATE webhooks SET secret = ?, updated_at = ? WHERE id = ?").run(secret, Date.now(), row.id);
    return { view: this.get(account, row.id), secret };
  }

  delete(account: string, id: string): void {
    const row = this.row(account, id);
    // Deliveries go with it (ON DELETE CASCADE); attempts on the wire are cut short.
    this.db.prepare("DELETE FROM webhooks WHERE id = ?").run(row.id);
    for (const f of this.inFlight.values()) if (f.webhookId === row.id) f.controller.abort();
  }

  // ---- deliveries ----

  private deliveryRow(webhookId: string, deliveryId: string): DeliveryRow {
    const row = this.db
      .prepare("SELECT * FROM webhook_deliveries WHERE id = ? COLLATE NOCASE AND webhook_id = ?")
      .get(deliveryId, webhookId) as DeliveryRow | undefined;
    if (!row) throw new ApiError("delivery_not_found", `Delivery ${deliveryId} of webhook ${webhookId} not found`);
    return row;
  }

  /** Queues one delivery (status pending, due now); returns its id. */
  private enqueue(
    webhookId: string,
    event: { id: string; type: string },
    body: string,
    redeliveredFrom: string | null = null,
  ): string {
    const id = newId("dlv");
    const now = Date.now();
    this.db
      .prepare(
        `INSERT INTO webhook_deliveries(id, webhook_id, event_id, event_type, body, status, attempts, redelivered_from, created_at, next_attempt_at)
         VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)`,
      )
      .run(id, webhookId, event.id, event.type, body, redeliveredFrom, now, now);
    return id;
  }

  /** POST …/test: a `webhook.test` event to this webhook alone, whatever it subscribed to. */
  sendTest(account: string, id: string): string {
    const row = this.row(account, id);
    const now = Date.now();
    const event = { id: newId("evt"), type: "webhook.test" };
    const body = JSON.stringify({
      ...event,
      created_at: iso(now),
      data: { webhook_id: row.id, message: "Test delivery from the orkestr engine" },
    });
    const deliveryId = this.enqueue(row.id, event, body);
    this.kick();
    return deliveryId;
  }

  /** A fresh delivery (new id, same event and body) of an earlier one, whatever its outcome. */
  redeliver(account: string, webhookId: string, deliveryId: string): string {
    const wh = this.row(account, webhookId);
    const d = this.deliveryRow(wh.id, deliveryId);
    const id = this.enqueue(wh.id, { id: d.event_id, type: d.event_type }, d.body, d.id);
    this.kick();
    return id;
  }

  listDeliveries(
    account: string,
    webhookId: string,
    q: { status?: DeliveryStatus; limit: number; cursor?: string },
  ): { items: DeliveryView[]; next: string | null } {
    const wh = this.row(account, webhookId);
    const where = ["webhook_id = ?"];
    const args: unknown[] = [wh.id];
    if (q.status) {
      where.push("status = ?");
      args.push(q.status);
    }
    if (q.cursor) {
      where.push("id < ?");
      args.push(q.cursor);
    }
    const rows = this.db
      .prepare(`SELECT * FROM webhook_deliveries WHERE ${where.join(" AND ")} ORDER BY id DESC LIMIT ?`)
      .all(...args, q.limit + 1) as DeliveryRow[];
    const items = rows.slice(0, q.limit);
    return { items: items.map(deliveryView), next: rows.length > q.limit ? items[items.length - 1]!.id : null };
  }

  getDelivery(
    account: string,
    webhookId: string,
    deliveryId: string,
  ): DeliveryView & { request_body: string; response_body_excerpt: string | null } {
    const wh = this.row(account, webhookId);
    const d = this.deliveryRow(wh.id, deliveryId);
    return { ...deliveryView(d), request_body: d.body, response_body_excerpt: d.response_body_excerpt };
  }

  // ---- fan-out from the event log ----

  /**
   * Runs inside EventLog.record(), i.e. inside the request that caused the event: it only writes
   * rows (the sandbox object is captured now, as it was when the event happened) and never throws.
   */
  private onEvent(e: EngineEvent): void {
    if (this.closed || !FANNED_OUT.has(e.type)) return;
    try {
      // Only the event's own account's webhooks: another account never learns of it.
      const hooks = (
        this.db
          .prepare("SELECT id, event_types FROM webhooks WHERE enabled = 1 AND account_id = ?")
          .all(e.account_id) as { id: string; event_types: string }[]
      ).filter((h) => (JSON.parse(h.event_types) as string[]).includes(e.type));
      if (!hooks.length) return;
      const body = JSON.stringify({ id: e.id, type: e.type, created_at: e.t, data: this.payload(e) });
      this.db.transaction(() => {
        for (const h of hooks) this.enqueue(h.id, e, body);
      })();
      this.kick();
    } catch (err) {
      this.log(`webhooks: could not queue ${e.type} ${e.id}: ${(err as Error).message}`);
    }
  }

  /** `data` of a delivery: the sandbox object for sandbox events; other events carry what their producer recorded. */
  private payload(e: EngineEvent): Record<string, unknown> {
    if (!e.type.startsWith("sandbox.") || !e.sandbox_id) return e.data;
    const row = this.sandboxes.rowUnscoped(e.sandbox_id);
    const data: Record<string, unknown> = { sandbox: row ? this.sandboxes.view(row) : { id: e.sandbox_id } };
    // sandbox.expired says what happened (paused or killed); terminate and pause say why.
    for (const k of ["action", "reason"]) if (e.data[k] !== undefined) data[k] = e.data[k];
    return data;
  }

  // ---- the dispatcher ----

  private kick(): void {
    this.arm(0);
  }

  private arm(ms: number): void {
    if (!this.started || this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.pump(), Math.max(0, ms));
    this.timer.unref();
  }

  /** Starts every due delivery there is room for, then sleeps until the next one falls due. */
  private pump(): void {
    this.timer = null;
    if (this.closed) return;
    const now = Date.now();
    const candidates = this.db
      .prepare(
        "SELECT id, webhook_id, next_attempt_at FROM webhook_deliveries WHERE status = 'pending' ORDER BY next_attempt_at, id LIMIT ?",
      )
      .all(this.inFlight.size + MAX_IN_FLIGHT) as { id: string; webhook_id: string; next_attempt_at: number | null }[];
    for (const c of candidates) {
      if (this.inFlight.has(c.id)) continue;
      const due = c.next_attempt_at ?? now;
      if (due > now) return this.arm(due - now);
      // Full: the next attempt to finish pumps again.
      if (this.inFlight.size >= MAX_IN_FLIGHT) return;
      this.startAttempt(c.id, c.webhook_id);
    }
  }

  private startAttempt(id: string, webhookId: string): void {
    const controller = new AbortController();
    const done = this.attempt(id, controller.signal)
      .catch((e: Error) => {
        this.log(`webhooks: delivery ${id} failed unexpectedly: ${e.message}`);
        // Never retry at once: a fault that repeats would otherwise spin.
        try {
          this.db
            .prepare("UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ? AND status = 'pending'")
            .run(Date.now() + this.config.webhookRetryMs, id);
        } catch {
          /* the database itself is failing; the log line above says so */
        }
      })
      .finally(() => {
        this.inFlight.delete(id);
        this.kick();
      });
    this.inFlight.set(id, { controller, webhookId, done });
  }

  private async attempt(id: string, signal: AbortSignal): Promise<void> {
    const d = this.db.prepare("SELECT * FROM webhook_deliveries WHERE id = ?").get(id) as DeliveryRow | undefined;
    const wh =
      d && (this.db.prepare("SELECT * FROM webhooks WHERE id = ?").get(d.webhook_id) as WebhookRow | undefined);
    if (!d || !wh || d.status !== "pending") return;
    // Signed at send time, so a retry after a rotation carries the new secret's signature.
    const headers = {
      "User-Agent": USER_AGENT,
      "X-Orkestr-Event": d.event_type,
      "X-Orkestr-Delivery": d.id,
      "X-Orkestr-Signature": signBody(wh.secret, d.body),
    };
    let result: AttemptResult;
    try {
      result = await postDelivery(wh.url, headers, d.body, signal, this.config.webhookAllow);
    } catch (e) {
      // Refused before anything was sent (say, a URL Node will not request): still a failed attempt.
      result = { status: null, excerpt: null, error: (e as Error).message, durationMs: 0 };
    }
    // Cut short by shutdown or deletion: not an attempt the receiver got to answer.
    if (signal.aborted || this.closed) return;
    this.record(id, result);
  }

  private record(id: string, r: AttemptResult): void {
    this.db.transaction(() => {
      const d = this.db.prepare("SELECT * FROM webhook_deliveries WHERE id = ?").get(id) as DeliveryRow | undefined;
      if (!d) return;
      const now = Date.now();
      const attempts = d.attempts + 1;
      const ok = r.error === null && r.status !== null && r.status >= 200 && r.status < 300;
      let status: DeliveryStatus = ok ? "succeeded" : d.status;
      let next: number | null = null;
      // A delivery cancelled while this attempt was on the wire stays failed (unless it got through).
      if (!ok && d.status === "pending") {
        if (attempts < MAX_ATTEMPTS) {
          status = "pending";
          next = now + this.config.webhookRetryMs;
        } else status = "failed";
      }
      const error = ok ? null : (r.error ?? `the receiver answered HTTP ${r.status}`);
      this.db
        .prepare(
          `UPDATE webhook_deliveries SET status = ?, attempts = ?, response_status = ?, response_body_excerpt = ?, error = ?, duration_ms = ?,
           last_attempt_at = ?, next_attempt_at = ? WHERE id = ?`,
        )
        .run(status, attempts, r.status, r.excerpt, error, r.durationMs, now, next, id);
      if (ok) this.db.prepare("UPDATE webhooks SET consecutive_failures = 0 WHERE id = ?").run(d.webhook_id);
      else if (status === "failed" && d.status === "pending") this.countFailure(d.webhook_id);
    })();
  }

  /** One more delivery that exhausted its retries; the 20th in a row disables the webhook. */
  private countFailure(webhookId: string): void {
    this.db.prepare("UPDATE webhooks SET consecutive_failures = consecutive_failures + 1 WHERE id = ?").run(webhookId);
    const wh = this.db.prepare("SELECT enabled, consecutive_failures FROM webhooks WHERE id = ?").get(webhookId) as
      { enabled: number; consecutive_failures: number } | undefined;
    if (wh?.enabled && wh.consecutive_failures >= AUTO_DISABLE_AFTER) {
      this.applyEnabled(webhookId, false, `auto-disabled after ${AUTO_DISABLE_AFTER} consecutive failed deliveries`);
      this.log(`webhooks: ${webhookId} auto-disabled after ${AUTO_DISABLE_AFTER} consecutive failed deliveries`);
    }
  }

  private prune(): void {
    this.db
      .prepare("DELETE FROM webhook_deliveries WHERE status != 'pending' AND created_at < ?")
      .run(Date.now() - DELIVERY_RETENTION_MS);
  }
}

// ---- receivers, signing and the wire ----

/** `sha256=<hex HMAC-SHA256 of the raw body>`, keyed by the whole `whsec_…` string as UTF-8 (the `X-Orkestr-Signature` header of a delivery). */
export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", Buffer.from(secret, "utf8")).update(body, "utf8").digest("hex")}`;
}

export interface AttemptResult {
  /** HTTP status, or null when no answer arrived (connect error, timeout). */
  status: number | null;
  excerpt: string | null;
  error: string | null;
  durationMs: number;
}

/**
 * One POST of a delivery. A fresh connection per attempt (no pooled agent), so a dead receiver
 * holds no sockets between attempts; redirects are not followed (a 3xx is a failure). Internal
 * addresses are refused before connecting (webhook-guard.ts), unless their origin is allowed.
 */
function postDelivery(
  target: string,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
  allow: readonly string[],
): Promise<AttemptResult> {
  const started = Date.now();
  const url = new URL(target);
  const plan = connectPlan(url, allow);
  if (plan.refused !== null)
    return Promise.resolve({ status: null, excerpt: null, error: plan.refused, durationMs: 0 });
  const client = url.protocol === "https:" ? https : http;
  const payload = Buffer.from(body, "utf8");
  return new Promise((resolve) => {
    let settled = false;
    // The status, once headers arrived: a receiver that then stalls still shows what it answered.
    let statusSeen: number | null = null;
    const finish = (r: Omit<AttemptResult, "durationMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve({ ...r, durationMs: Date.now() - started });
    };
    const req = client.request(
      url,
      {
        method: "POST",
        agent: false,
        lookup: plan.lookup,
        headers: { ...headers, "Content-Type": "application/json", "Content-Length": String(payload.length) },
      },
      (res) => {
        statusSeen = res.statusCode ?? null;
        const kept: Buffer[] = [];
        let size = 0;
        const answered = () => {
          // Invalid UTF-8, or a character cut at the 2 KiB edge, shows as U+FFFD.
          finish({ status: res.statusCode ?? null, excerpt: Buffer.concat(kept).toString("utf8"), error: null });
          res.destroy();
        };
        res.on("data", (c: Buffer) => {
          const room = RESPONSE_EXCERPT_BYTES - size;
          if (room > 0) {
            kept.push(c.subarray(0, room));
            size += Math.min(c.length, room);
          }
          // With the excerpt full, the rest of a large answer is not worth reading.
          if (size >= RESPONSE_EXCERPT_BYTES) answered();
        });
        res.on("end", answered);
        res.on("error", answered);
      },
    );
    const timer = setTimeout(() => {
      finish({ status: statusSeen, excerpt: null, error: `no complete answer within ${DELIVERY_TIMEOUT_MS / 1000} s` });
      req.destroy();
    }, DELIVERY_TIMEOUT_MS);
    const onAbort = () => {
      finish({ status: null, excerpt: null, error: "aborted" });
      req.destroy();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    req.on("error", (e: NodeJS.ErrnoException) =>
      finish({
        status: null,
        excerpt: null,
        error: e.code && e.code !== REFUSED_CODE ? `${e.code}: ${e.message}` : e.message,
      }),
    );
    req.end(payload);
  });
}
