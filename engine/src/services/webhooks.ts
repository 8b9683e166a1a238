import type { EngineConfig } from "../config.js";
import { ApiError } from "../errors.js";
import { newId, newSecret } from "../lib/ids.js";
import { iso, isoOrNull } from "../lib/time.js";
import type { Db } from "../store/db.js";
import { pageNewestFirst, type Condition } from "../store/paging.js";
import { WEBHOOK_EVENT_TYPES } from "../../../lib/orkestr/webhook-events.js";
import type { EngineEvent, EventLog } from "./events.js";
import type { SandboxService } from "./sandboxes.js";
import { DeliveryDispatcher, MAX_ATTEMPTS } from "./webhooks/dispatcher.js";
import type { DeliveryRow, DeliveryStatus, WebhookRow } from "./webhooks/rows.js";

export { AUTO_DISABLE_AFTER, MAX_ATTEMPTS } from "./webhooks/dispatcher.js";
export { signBody } from "./webhooks/signing.js";
export { DELIVERY_TIMEOUT_MS, RESPONSE_EXCERPT_BYTES, type AttemptResult } from "./webhooks/wire.js";

export { WEBHOOK_EVENT_TYPES };
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
/** What an omitted `event_types` subscribes to: every event the engine records (seed 003: "omit for all events"). */
const ALL_EVENTS = WEBHOOK_EVENT_TYPES.filter((t) => t !== "webhook.test");
const FANNED_OUT = new Set<string>(ALL_EVENTS);

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
  private readonly dispatcher: DeliveryDispatcher;
  private readonly unsubscribe: () => void;
  private closed = false;

  constructor(
    config: EngineConfig,
    private readonly db: Db,
    private readonly events: EventLog,
    /** Sandbox events carry the sandbox object: looked up when the event is queued. */
    private readonly sandboxes: Pick<SandboxService, "rowUnscoped" | "view">,
    private readonly log: (msg: string) => void,
  ) {
    this.dispatcher = new DeliveryDispatcher(config, db, log, (id, reason) => this.applyEnabled(id, false, reason));
    // Subscribed at once, so events recorded while the engine recovers (a build or a volume move
    // that the restart finished) are queued like any other.
    this.unsubscribe = this.events.subscribe((e) => this.onEvent(e));
  }

  /** Starts sending: resumes deliveries an earlier run left pending, then whatever gets queued. */
  start(): void {
    this.dispatcher.start();
  }

  /** Stops sending. Attempts cut short are not counted: their rows stay pending for the next run. */
  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe();
    await this.dispatcher.close();
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
  /** The webhook, refused while disabled: nothing is sent to a disabled webhook, a test or a redelivery neither. */
  private enabledRow(account: string, id: string, what: string): WebhookRow {
    const row = this.row(account, id);
    if (!row.enabled)
      throw new ApiError(
        "webhook_disabled",
        `Webhook ${id} is disabled${row.disabled_reason ? ` (${row.disabled_reason})` : ""}: enable it to ${what}.`,
      );
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
    const { items, next } = pageNewestFirst<WebhookRow>(this.db, "webhooks", [["account_id = ?", account]], page);
    return { items: items.map(webhookView), next };
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
    this.dispatcher.abortFor(row.id);
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
    const row = this.enabledRow(account, id, "send it a test");
    const now = Date.now();
    const event = { id: newId("evt"), type: "webhook.test" };
    const body = JSON.stringify({
      ...event,
      created_at: iso(now),
      data: { webhook_id: row.id, message: "Test delivery from the orkestr engine" },
    });
    const deliveryId = this.enqueue(row.id, event, body);
    this.dispatcher.kick();
    return deliveryId;
  }

  /** A fresh delivery (new id, same event and body) of an earlier one, whatever its outcome. */
  redeliver(account: string, webhookId: string, deliveryId: string): string {
    const wh = this.enabledRow(account, webhookId, "redeliver to it");
    const d = this.deliveryRow(wh.id, deliveryId);
    const id = this.enqueue(wh.id, { id: d.event_id, type: d.event_type }, d.body, d.id);
    this.dispatcher.kick();
    return id;
  }

  listDeliveries(
    account: string,
    webhookId: string,
    q: { status?: DeliveryStatus; limit: number; cursor?: string },
  ): { items: DeliveryView[]; next: string | null } {
    const wh = this.row(account, webhookId);
    const where: Condition[] = [["webhook_id = ?", wh.id]];
    if (q.status) where.push(["status = ?", q.status]);
    const { items, next } = pageNewestFirst<DeliveryRow>(this.db, "webhook_deliveries", where, q);
    return { items: items.map(deliveryView), next };
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
      this.dispatcher.kick();
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
}
