import { withPageTeam } from "../api/core";
import { object } from "../api/read";
import { path } from "../orkestr/path";
// Types only: zod stays out of the browser bundle (lib/api/core.ts says why).
import type { SandboxEvent } from "../orkestr/schemas/events";
import type { Metrics } from "../orkestr/schemas/metrics";
import type { Sandbox } from "../orkestr/schemas/sandboxes";
import { EVENTS_MAX, readEvent } from "./events";
import { readSandbox } from "./sandboxes";

// A sandbox page's one live stream (GET /api/v1/sandboxes/{id}/live, SSE), shared by the hooks of
// the page: the sandbox when it changes, each metrics read and the activity timeline, pushed by the
// console instead of polled by each hook. With 200 open pages that is 200 open streams instead of
// 240 requests a second. One EventSource per sandbox id while anything listens; it closes while the
// browser tab is hidden. Each hook keeps its polling for when the stream is not live (connecting,
// dropped, hidden, or a server without the route), so the page stays current either way.

/**
 * connecting: not open yet; live: open; paused: the tab is hidden; failed: the server has no stream
 * for us (poll); ended: the sandbox's history ended (it is gone), so the server closed the stream.
 */
export type LiveState = "connecting" | "live" | "reconnecting" | "paused" | "failed" | "ended";

/** Opening failed this many times in a row without ever opening: the hooks poll instead. */
export const FAILED_OPENS_BEFORE_POLLING = 3;

export interface LiveProblem {
  detail: string;
  code: string;
  status: number;
}

export interface LiveListener {
  state?(state: LiveState): void;
  sandbox?(sandbox: Sandbox): void;
  sandboxError?(problem: LiveProblem): void;
  metrics?(metrics: Metrics): void;
  metricsError?(problem: LiveProblem): void;
  /** A timeline event (oldest first); late listeners first get those already received. */
  event?(event: SandboxEvent): void;
  eventsError?(problem: LiveProblem): void;
}

const readMetrics = object<Metrics>({}, { samples: "array" });
const readProblem = object<LiveProblem>({ detail: "string", code: "string" });

export const liveUrl = (id: string, cursor?: string | null) =>
  withPageTeam(`${path`/api/v1/sandboxes/${id}/live`}${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ""}`);

class LiveConnection {
  readonly listeners = new Set<LiveListener>();
  state: LiveState = "connecting";
  private source: EventSource | null = null;
  private failedOpens = 0;
  private lastEventId: string | null = null;
  readonly events: SandboxEvent[] = [];

  constructor(private readonly id: string) {
    document.addEventListener("visibilitychange", this.onVisibility);
    if (document.hidden) this.setState("paused");
    else this.open();
  }

  close(): void {
    document.removeEventListener("visibilitychange", this.onVisibility);
    this.source?.close();
    this.source = null;
  }

  private readonly onVisibility = () => {
    if (this.state === "failed" || this.state === "ended") return;
    if (document.hidden) {
      this.source?.close();
      this.source = null;
      this.setState("paused");
    } else if (!this.source) {
      this.setState("connecting");
      this.open();
    }
  };

  private setState(state: LiveState): void {
    if (this.state === state) return;
    this.state = state;
    for (const l of this.listeners) l.state?.(state);
  }

  private each<K extends keyof LiveListener>(key: K, value: Parameters<NonNullable<LiveListener[K]>>[0]): void {
    for (const l of this.listeners) (l[key] as ((v: typeof value) => void) | undefined)?.(value);
  }

  private open(): void {
    const es = new EventSource(liveUrl(this.id, this.lastEventId));
    this.source = es;
    let opened = false;
    const json = (msg: MessageEvent): unknown => {
      try {
        return JSON.parse(msg.data as string);
      } catch {
        return undefined; // not a frame of ours (a keepalive some proxies send as data)
      }
    };
    const on = (name: string, handle: (data: unknown) => void) =>
      es.addEventListener(name, (msg) => {
        const data = json(msg as MessageEvent);
        if (data === undefined) return;
        try {
          handle(data);
        } catch {
          // a frame without the fields the page relies on: skipped
        }
      });
    es.onopen = () => {
      opened = true;
      this.failedOpens = 0;
      this.setState("live");
    };
    es.onmessage = (msg) => {
      if (msg.lastEventId) this.lastEventId = msg.lastEventId;
      const data = json(msg);
      if (data === undefined) return;
      try {
        const raw = readEvent(data);
        const event = { ...raw, data: raw.data ?? {} };
        this.events.push(event);
        if (this.events.length > EVENTS_MAX) this.events.splice(0, this.events.length - EVENTS_MAX);
        this.each("event", event);
      } catch {
        // not an event
      }
    };
    on("sandbox", (d) => this.each("sandbox", readSandbox(d)));
    on("sandbox-error", (d) => this.each("sandboxError", readProblem(d)));
    on("metrics", (d) => this.each("metrics", readMetrics(d)));
    on("metrics-error", (d) => this.each("metricsError", readProblem(d)));
    on("events-error", (d) => this.each("eventsError", readProblem(d)));
    // Without this the EventSource would reconnect to a stream that ends at once, again and again.
    on("end", () => {
      es.close();
      this.source = null;
      this.setState("ended");
    });
    es.onerror = () => {
      if (this.source !== es) return;
      if (!opened) this.failedOpens += 1;
      if (es.readyState === EventSource.CLOSED || this.failedOpens >= FAILED_OPENS_BEFORE_POLLING) {
        // The server refused the stream (an error status, or no such route): the hooks poll.
        es.close();
        this.source = null;
        this.setState("failed");
        return;
      }
      this.setState("reconnecting"); // EventSource retries by itself, sending Last-Event-ID
    };
  }
}

const connections = new Map<string, LiveConnection>();

/**
 * Listens to sandbox `id`'s live stream; returns the unsubscribe. The listener hears the current
 * state and the timeline events received so far at once, then everything new.
 */
export function subscribeLive(id: string, listener: LiveListener): () => void {
  let conn = connections.get(id);
  if (!conn) {
    conn = new LiveConnection(id);
    connections.set(id, conn);
  }
  const c = conn;
  c.listeners.add(listener);
  listener.state?.(c.state);
  for (const e of c.events) listener.event?.(e);
  return () => {
    if (!c.listeners.delete(listener) || c.listeners.size > 0) return;
    c.close();
    if (connections.get(id) === c) connections.delete(id);
  };
}
