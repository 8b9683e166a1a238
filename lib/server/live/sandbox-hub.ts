import type { OrkestrClient } from "../../orkestr/core";
import { asOrkestrError } from "../../orkestr/errors";
import { parseStream } from "../../orkestr/stream";
import { isFinished } from "../../sandbox-status";

// One live view of one sandbox, shared by every browser tab of the same orkestr connection that
// watches it: the console reads the upstream once (the sandbox every SANDBOX_POLL_MS, its metrics at
// the engine's sample interval, one events follow stream) and pushes what it read to each tab as
// server-sent events, where each tab used to poll the sandbox and its metrics on its own. A poll
// through the console costs a whole request (session, routing, the upstream call); a push costs
// writing a few hundred bytes to an open stream.
//
// Sharing is per connection on purpose: connections and their tokens belong to one user, so a hub
// only ever shows a tab what that same token already lets it read.

/** How often the sandbox itself (status, expiry) is re-read; a sandbox.* event re-reads it at once. */
export const SANDBOX_POLL_MS = 5_000;
/** The metrics interval when the upstream does not say (sample_interval_seconds). */
const DEFAULT_METRICS_MS = 1_000;
/** Timeline events kept for tabs that join later or reconnect (the browser keeps as many). */
export const EVENTS_KEPT = 2_000;
/** Retry delays after upstream errors: doubled per failure up to the cap. */
const RETRY_MS = 1_000;
const RETRY_MAX_MS = 30_000;

/** What a tab's stream receives: SSE text, one or more whole frames. */
export interface LiveSubscriber {
  send(text: string): void;
  /** The hub is gone (the sandbox's history ended or the hub was stopped): end the tab's stream. */
  end(): void;
}

export interface LiveTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: LiveTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

/** One SSE frame; `data` is JSON on one line, so it never needs splitting. */
export function sseFrame(data: unknown, opts: { event?: string; id?: string } = {}): string {
  let out = "";
  if (opts.id !== undefined) out += `id: ${opts.id.replace(/[\r\n]/g, "")}\n`;
  if (opts.event !== undefined) out += `event: ${opts.event}\n`;
  return `${out}data: ${JSON.stringify(data)}\n\n`;
}

/** Pages of events a resuming tab is caught up with at most (the browser keeps 2,000 events). */
const CATCH_UP_PAGES = 20;
const END_FRAME = "event: end\ndata: {}\n\n";

interface KeptEvent {
  id: string | undefined;
  frame: string;
}

export class SandboxHub {
  /** Each tab, with what is held back for it while its timeline catches up (null: nothing held). */
  private readonly subscribers = new Map<LiveSubscriber, { held: KeptEvent[] | null }>();
  private readonly events: KeptEvent[] = [];
  private readonly abort = new AbortController();
  private sandboxJson: string | null = null;
  private metricsSince: string | number | undefined;
  private metricsTimer: unknown = null;
  private sandboxTimer: unknown = null;
  private stopped = false;
  private finished = false;
  private lastEventId: string | undefined;
  /** Settles with the first read of the sandbox: a tab joins only after it (and fails with it). */
  readonly ready: Promise<void>;

  /**
   * `startCursor`: the first tab's last event id, where the upstream follow stream starts (the
   * page reads the history itself; the stream only has to bring what is new to it).
   */
  constructor(
    readonly sandboxId: string,
    private readonly orkestr: OrkestrClient,
    private readonly onIdle: (hub: SandboxHub) => void,
    private readonly timers: LiveTimers = realTimers,
    private readonly startCursor?: string,
  ) {
    this.lastEventId = startCursor;
    this.ready = this.readSandbox();
    this.ready.then(
      () => {
        if (this.stopped) return;
        void this.followEvents(0);
        void this.readMetrics(0);
        this.scheduleSandbox();
      },
      () => this.stop(),
    );
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  get size(): number {
    return this.subscribers.size;
  }

  /**
   * Adds a tab. It gets the sandbox as last read, then the timeline events after `cursor` (all kept
   * events without one), then everything new. A cursor the hub has not seen (older than the kept
   * events, or from before this hub) is caught up from the upstream's paged events first, with the
   * live frames held back meanwhile, so the tab gets neither a gap nor a repeat.
   */
  subscribe(sub: LiveSubscriber, cursor?: string): () => void {
    const found = cursor ? this.events.findIndex((e) => e.id === cursor) : -1;
    const catchUp = !!cursor && found < 0 && cursor !== this.startCursor;
    const entry = { held: catchUp ? ([] as KeptEvent[]) : null };
    this.subscribers.set(sub, entry);
    let head = "";
    if (this.sandboxJson) head += `event: sandbox\ndata: ${this.sandboxJson}\n\n`;
    if (!catchUp) for (const e of this.events.slice(found + 1)) head += e.frame;
    if (head) sub.send(head);
    if (catchUp) void this.catchUp(sub, entry, cursor);
    else if (this.finished) {
      sub.send(END_FRAME);
      sub.end();
    }
    return () => {
      if (!this.subscribers.delete(sub)) return;
      if (this.subscribers.size === 0) this.onIdle(this);
    };
  }

  private async catchUp(sub: LiveSubscriber, entry: { held: KeptEvent[] | null }, cursor: string): Promise<void> {
    const sent = new Set<string>();
    let text = "";
    try {
      let next: string | null = cursor;
      for (let page = 0; next && page < CATCH_UP_PAGES; page++) {
        const p = await this.orkestr.sandboxes.events(
          this.sandboxId,
          { cursor: next, limit: 100 },
          { signal: this.abort.signal },
        );
        for (const e of p.items) {
          if (e.id) sent.add(e.id);
          text += sseFrame(e, e.id ? { id: e.id } : {});
        }
        next = p.nextCursor;
      }
    } catch {
      // The kept events and what follows are still sent: the page drops any it already has by id.
      text = this.events.map((e) => e.frame).join("");
      for (const e of this.events) if (e.id) sent.add(e.id);
    }
    if (!this.subscribers.has(sub)) return;
    for (const e of entry.held ?? []) if (!e.id || !sent.has(e.id)) text += e.frame;
    entry.held = null;
    if (text) sub.send(text);
    if (this.finished) {
      sub.send(END_FRAME);
      sub.end();
    }
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.abort.abort();
    this.timers.clearTimeout(this.metricsTimer);
    this.timers.clearTimeout(this.sandboxTimer);
    for (const sub of this.subscribers.keys()) sub.end();
    this.subscribers.clear();
  }

  /** Sends to every tab; `id` marks a timeline event (held back for a tab that is catching up). */
  private broadcast(frame: string, id?: string): void {
    for (const [sub, entry] of this.subscribers) {
      if (entry.held) entry.held.push({ id, frame });
      else sub.send(frame);
    }
  }

  private async readSandbox(): Promise<void> {
    const sandbox = await this.orkestr.sandboxes.get(this.sandboxId, { signal: this.abort.signal });
    const json = JSON.stringify(sandbox);
    if (json !== this.sandboxJson) {
      this.sandboxJson = json;
      this.broadcast(`event: sandbox\ndata: ${json}\n\n`);
    }
  }

  private scheduleSandbox(ms = SANDBOX_POLL_MS): void {
    if (this.stopped) return;
    this.timers.clearTimeout(this.sandboxTimer);
    this.sandboxTimer = this.timers.setTimeout(() => {
      this.readSandbox().then(
        () => this.scheduleSandbox(),
        (err: unknown) => {
          if (this.stopped) return;
          // The tabs re-read the sandbox themselves, so each shows the error as the page does for a poll.
          this.broadcast(sseFrame(errorBody(err), { event: "sandbox-error" }));
          this.scheduleSandbox();
        },
      );
    }, ms);
  }

  private async readMetrics(failures: number): Promise<void> {
    if (this.stopped) return;
    let next: number;
    try {
      const m = await this.orkestr.sandboxes.metrics(this.sandboxId, this.metricsSince, { signal: this.abort.signal });
      if (this.stopped) return;
      const last = m.samples?.at(-1);
      if (last) this.metricsSince = last.t as string | number;
      this.broadcast(sseFrame(m, { event: "metrics" }));
      // A finished sandbox's metrics no longer change: this was the last read.
      if (isFinished(m.sandbox_status ?? "")) return;
      const interval = Number(m.sample_interval_seconds);
      next =
        Number.isFinite(interval) && interval > 0 ? Math.max(DEFAULT_METRICS_MS, interval * 1000) : DEFAULT_METRICS_MS;
      failures = 0;
    } catch (err) {
      if (this.stopped) return;
      this.broadcast(sseFrame(errorBody(err), { event: "metrics-error" }));
      failures += 1;
      next = Math.min(RETRY_MAX_MS, RETRY_MS * 2 ** failures);
    }
    this.metricsTimer = this.timers.setTimeout(() => void this.readMetrics(failures), next);
  }

  /** One upstream follow stream for all tabs, resumed from the last event id after a drop. */
  private async followEvents(failures: number): Promise<void> {
    if (this.stopped) return;
    try {
      const res = await this.orkestr.sandboxes.followEventsRaw(
        this.sandboxId,
        { cursor: this.lastEventId },
        { signal: this.abort.signal },
      );
      if (!res.body) throw new Error("the event stream has no body");
      for await (const frame of parseStream(res.body, { signal: this.abort.signal })) {
        failures = 0;
        if (frame.id) this.lastEventId = frame.id;
        const text = sseFrame(frame.data, frame.id ? { id: frame.id } : {});
        this.events.push({ id: frame.id, frame: text });
        if (this.events.length > EVENTS_KEPT) this.events.splice(0, this.events.length - EVENTS_KEPT);
        this.broadcast(text, frame.id);
        const type = (frame.data as { type?: unknown } | null)?.type;
        // A lifecycle event: the status the tabs show changes now, not at the next poll.
        if (typeof type === "string" && type.startsWith("sandbox.")) this.scheduleSandbox(0);
      }
      // The upstream ended the stream: the sandbox has no more history. The tabs' streams end too,
      // after a frame saying so (an EventSource would otherwise reconnect to a stream that ends).
      this.finished = true;
      this.broadcast(END_FRAME);
      for (const [sub, entry] of this.subscribers) if (!entry.held) sub.end();
      this.stop();
    } catch (err) {
      if (this.stopped) return;
      failures += 1;
      const wait = Math.min(RETRY_MAX_MS, RETRY_MS * 2 ** failures);
      if (failures >= 3) this.broadcast(sseFrame(errorBody(err), { event: "events-error" }));
      this.timers.setTimeout(() => void this.followEvents(failures), wait);
    }
  }
}

function errorBody(err: unknown): { detail: string; code: string; status: number } {
  const e = asOrkestrError(err);
  return { detail: e.detail, code: e.code, status: e.status };
}

/** The hubs of a process, by connection and sandbox. */
export class HubRegistry {
  private readonly hubs = new Map<string, SandboxHub>();

  constructor(private readonly timers: LiveTimers = realTimers) {}

  /** The running hub for `key`, if any. */
  peek(key: string): SandboxHub | undefined {
    const hub = this.hubs.get(key);
    return hub && !hub.isStopped ? hub : undefined;
  }

  /** The hub for `key` (connection and sandbox), started with `orkestr` if there is none yet. */
  get(key: string, sandboxId: string, orkestr: () => OrkestrClient, startCursor?: string): SandboxHub {
    const existing = this.hubs.get(key);
    if (existing && !existing.isStopped) return existing;
    const hub = new SandboxHub(
      sandboxId,
      orkestr(),
      (h) => {
        if (this.hubs.get(key) === h) this.hubs.delete(key);
        h.stop();
      },
      this.timers,
      startCursor,
    );
    this.hubs.set(key, hub);
    // A hub whose first read failed is not kept: the next tab tries again.
    hub.ready.catch(() => {
      if (this.hubs.get(key) === hub) this.hubs.delete(key);
    });
    return hub;
  }

  get count(): number {
    return this.hubs.size;
  }
}
