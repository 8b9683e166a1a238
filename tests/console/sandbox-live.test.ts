import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FAILED_OPENS_BEFORE_POLLING, subscribeLive, type LiveState } from "../../lib/queries/sandbox-live";

// The browser side of the live stream, with the two browser APIs it uses (EventSource and the
// document's visibility) replaced by doubles the test drives.

class FakeEventSource {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSED = 2;
  static all: FakeEventSource[] = [];
  readyState = FakeEventSource.CONNECTING;
  onopen: (() => void) | null = null;
  onmessage: ((msg: { data: string; lastEventId: string }) => void) | null = null;
  onerror: (() => void) | null = null;
  private named = new Map<string, ((msg: { data: string }) => void)[]>();
  constructor(readonly url: string) {
    FakeEventSource.all.push(this);
  }
  addEventListener(name: string, fn: (msg: { data: string }) => void) {
    this.named.set(name, [...(this.named.get(name) ?? []), fn]);
  }
  close() {
    this.readyState = FakeEventSource.CLOSED;
  }
  // What the server does:
  open() {
    this.readyState = FakeEventSource.OPEN;
    this.onopen?.();
  }
  message(data: unknown, id = "") {
    this.onmessage?.({ data: JSON.stringify(data), lastEventId: id });
  }
  push(name: string, data: unknown) {
    for (const fn of this.named.get(name) ?? []) fn({ data: JSON.stringify(data) });
  }
  fail(closed = false) {
    if (closed) this.readyState = FakeEventSource.CLOSED;
    this.onerror?.();
  }
}

const visibility = new Set<() => void>();
const doc = {
  hidden: false,
  addEventListener: (_: string, fn: () => void) => visibility.add(fn),
  removeEventListener: (_: string, fn: () => void) => visibility.delete(fn),
};
const setHidden = (hidden: boolean) => {
  doc.hidden = hidden;
  for (const fn of [...visibility]) fn();
};
const latest = () => FakeEventSource.all.at(-1)!;

beforeEach(() => {
  FakeEventSource.all = [];
  doc.hidden = false;
  Object.assign(globalThis, { EventSource: FakeEventSource, document: doc });
});
afterEach(() => {
  visibility.clear();
  delete (globalThis as Record<string, unknown>).EventSource;
  delete (globalThis as Record<string, unknown>).document;
});

describe("subscribeLive", () => {
  it("shares one stream among a page's listeners and closes it when the last one leaves", () => {
    const a: LiveState[] = [];
    const stopA = subscribeLive("sbx_1", { state: (s) => a.push(s) });
    const metrics: unknown[] = [];
    const stopB = subscribeLive("sbx_1", { metrics: (m) => metrics.push(m) });
    expect(FakeEventSource.all).toHaveLength(1);
    expect(latest().url).toBe("/api/v1/sandboxes/sbx_1/live");
    latest().open();
    latest().push("metrics", { sandbox_status: "running", samples: [] });
    expect(a).toEqual(["connecting", "live"]);
    expect(metrics).toHaveLength(1);
    stopA();
    expect(latest().readyState).toBe(FakeEventSource.OPEN);
    stopB();
    expect(latest().readyState).toBe(FakeEventSource.CLOSED);
  });

  it("hands pushed sandboxes on, and replays the timeline so far to a listener that joins later", () => {
    const sandboxes: string[] = [];
    const stop = subscribeLive("sbx_2", { sandbox: (s) => sandboxes.push(s.status) });
    latest().open();
    latest().push("sandbox", { id: "sbx_2", status: "paused" });
    latest().push("sandbox", { status: "no id" }); // not a sandbox: skipped
    latest().message({ id: "ev_1", type: "sandbox.created" }, "ev_1");
    latest().message({ id: "ev_2", type: "exec", data: { command: "ls" } }, "ev_2");
    expect(sandboxes).toEqual(["paused"]);
    const events: string[] = [];
    const stopLate = subscribeLive("sbx_2", { event: (e) => events.push(e.type) });
    expect(events).toEqual(["sandbox.created", "exec"]);
    latest().message({ id: "ev_3", type: "exec" }, "ev_3");
    expect(events).toEqual(["sandbox.created", "exec", "exec"]);
    stop();
    stopLate();
  });

  it("gives up after repeated failed opens, so the hooks poll; a later listener hears it at once", () => {
    const states: LiveState[] = [];
    const stop = subscribeLive("sbx_3", { state: (s) => states.push(s) });
    for (let i = 0; i < FAILED_OPENS_BEFORE_POLLING; i++) latest().fail();
    expect(states.at(-1)).toBe("failed");
    expect(latest().readyState).toBe(FakeEventSource.CLOSED);
    const later: LiveState[] = [];
    const stopLater = subscribeLive("sbx_3", { state: (s) => later.push(s) });
    expect(later).toEqual(["failed"]);
    expect(FakeEventSource.all).toHaveLength(1);
    stop();
    stopLater();
  });

  it("fails at once on an error status (the EventSource closed), and reports a drop after opening as reconnecting", () => {
    const states: LiveState[] = [];
    const stop = subscribeLive("sbx_4", { state: (s) => states.push(s) });
    latest().open();
    latest().fail();
    expect(states).toEqual(["connecting", "live", "reconnecting"]);
    latest().fail(true);
    expect(states.at(-1)).toBe("failed");
    stop();
  });

  it("closes while the tab is hidden and resumes after the last event id when shown", () => {
    const states: LiveState[] = [];
    const stop = subscribeLive("sbx_5", { state: (s) => states.push(s) });
    latest().open();
    latest().message({ id: "ev_9", type: "exec" }, "ev_9");
    setHidden(true);
    expect(latest().readyState).toBe(FakeEventSource.CLOSED);
    expect(states.at(-1)).toBe("paused");
    setHidden(false);
    expect(FakeEventSource.all).toHaveLength(2);
    expect(latest().url).toBe("/api/v1/sandboxes/sbx_5/live?cursor=ev_9");
    latest().open();
    expect(states.slice(-2)).toEqual(["connecting", "live"]);
    stop();
  });

  it("stops for good on the server's end frame instead of reconnecting to a finished sandbox", () => {
    const states: LiveState[] = [];
    const stop = subscribeLive("sbx_6", { state: (s) => states.push(s) });
    latest().open();
    latest().push("end", {});
    expect(states.at(-1)).toBe("ended");
    expect(latest().readyState).toBe(FakeEventSource.CLOSED);
    setHidden(true);
    setHidden(false);
    expect(FakeEventSource.all).toHaveLength(1);
    stop();
  });
});
