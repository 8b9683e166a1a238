import type { EngineConfig } from "../../config.js";
import type { Db } from "../../store/db.js";
import type { DeliveryRow, DeliveryStatus, WebhookRow } from "./rows.js";
import { signBody } from "./signing.js";
import { postDelivery, type AttemptResult } from "./wire.js";

/** First attempt plus 3 retries (seed 003: "retry 3 times, 10 s apart"). */
export const MAX_ATTEMPTS = 4;
/** Consecutive failed deliveries after which a webhook disables itself (seed 003). */
export const AUTO_DISABLE_AFTER = 20;
/** Attempts in flight at once, over all webhooks: a flood of events queues instead of opening sockets unboundedly. */
const MAX_IN_FLIGHT = 16;
/** Finished deliveries are kept this long in the log. */
const DELIVERY_RETENTION_MS = 30 * 86_400_000;
const USER_AGENT = "orkestr-webhooks (baton-engine)";

/**
 * Sends queued deliveries in the background: due rows first, at most MAX_IN_FLIGHT at once, each
 * signed at send time; records every attempt, schedules retries, and counts a webhook's failure
 * streak (the AUTO_DISABLE_AFTER-th disables it, through `disable`, the subscription side's rule).
 */
export class DeliveryDispatcher {
  private inFlight = new Map<string, { controller: AbortController; webhookId: string; done: Promise<void> }>();
  private timer: NodeJS.Timeout | null = null;
  private pruner: NodeJS.Timeout | null = null;
  /** Deliveries are queued from construction on, but sent only once start() runs. */
  private started = false;
  private closed = false;

  constructor(
    private readonly config: EngineConfig,
    private readonly db: Db,
    private readonly log: (msg: string) => void,
    /** Disables a webhook and cancels its queued deliveries (WebhookService's rule). */
    private readonly disable: (webhookId: string, reason: string) => void,
  ) {}

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
    if (this.timer) clearTimeout(this.timer);
    if (this.pruner) clearInterval(this.pruner);
    const running = [...this.inFlight.values()];
    for (const f of running) f.controller.abort();
    await Promise.allSettled(running.map((f) => f.done));
  }

  /** Attempts of this webhook on the wire are cut short (it was deleted). */
  abortFor(webhookId: string): void {
    for (const f of this.inFlight.values()) if (f.webhookId === webhookId) f.controller.abort();
  }

  /** Something was queued: look for due deliveries now. */
  kick(): void {
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
      this.disable(webhookId, `auto-disabled after ${AUTO_DISABLE_AFTER} consecutive failed deliveries`);
      this.log(`webhooks: ${webhookId} auto-disabled after ${AUTO_DISABLE_AFTER} consecutive failed deliveries`);
    }
  }

  private prune(): void {
    this.db
      .prepare("DELETE FROM webhook_deliveries WHERE status != 'pending' AND created_at < ?")
      .run(Date.now() - DELIVERY_RETENTION_MS);
  }
}
