import { describe, expect, it } from "vitest";
import { HubRegistry, SandboxHub, type LiveSubscriber, type LiveTimers } from "../../lib/server/live/sandbox-hub";
import { createOrkestrClient } from "../../lib/orkestr/core";
import { OrkestrError } from "../../lib/orkestr/errors";
import { fakeFetch, type RecordedRequest } from "../../lib/orkestr/testing/fake-fetch";

const ID = "sbx_live1";
const encoder = new TextEncoder();

/** Timers the test fires by hand: nothing runs on its own. */
function manualTimers() {
  const pending = new Map<number, { fn: () => void; ms: number }>();
  let next = 1;
  const timers: LiveTimers = {
    setTimeout: (fn, ms) => {
      pending.set(next, { fn, ms });
      return next++;
    },
    clearTimeout: (h) => void pending.delete(h as number),
  };
  /** Fires every timer due within `ms` of now (the ones pending at the call). */
  const fire = async (ms = Infinity) => {
    for (const [h, t] of [...pending]) {
      if (t.ms > ms) continue;
      pending.delete(h);
      t.fn();
    }
    await settle();
  };
  return { timers, fire, pending };
}

const settle = () => new Promise((r) => setTimeout(r, 10));

/** A fake upstream: the sandbox, its metrics and one events follow stream the test writes to. */
function upstream(opts: { status?: number } = {}) {
  let sandbox = { id: ID, status: "running", template: "base" };
  const streams: ReadableStreamDefaultController<Uint8Array>[] = [];
  let sample = 0;
  /** Every event emitted, as the paged events endpoint lists them. */
  const history: { id: string; type: string; data: object }[] = [];
  const json = (body: unknown, status = 200) =>
    new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  const fetch = fakeFetch((req: RecordedRequest) => {
    if (opts.status) return json({ detail: "No such sandbox.", code: "sandbox_not_found" }, opts.status);
    if (req.path === `/sandboxes/${ID}`) return json(sandbox);
    if (req.path === `/sandboxes/${ID}/metrics`) {
      sample += 1;
      return json({
        sandbox_status: sandbox.status,
        sample_interval_seconds: 1,
        samples: [{ t: 1_700_000_000 + sample, cpu_percent: sample, mem_bytes: 1 }],
      });
    }
    if (req.path === `/sandboxes/${ID}/events` && req.query.get("follow") !== "true") {
      const after = req.query.get("cursor");
      const from = after ? history.findIndex((e) => e.id === after) + 1 : 0;
      return json(history.slice(from));
    }
    if (req.path === `/sandboxes/${ID}/events`) {
      const body = new ReadableStream<Uint8Array>({ start: (c) => void streams.push(c) });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    }
    return json({ detail: "unexpected", code: "not_found" }, 404);
  });
  const client = createOrkestrClient({ baseUrl: "http://engine.test", token: "ork_testtoken1", fetch, maxRetries: 0 });
  return {
    fetch,
    client,
    setSandbox: (s: Partial<typeof sandbox>) => (sandbox = { ...sandbox, ...s }),
    emit: (id: string, type: string) => {
      history.push({ id, type, data: {} });
      streams.at(-1)!.enqueue(encoder.encode(`id: ${id}\ndata: ${JSON.stringify({ id, type, data: {} })}\n\n`));
    },
    /** An event from before the hub (its stream never carries it). */
    past: (id: string, type: string) => history.push({ id, type, data: {} }),
    endStream: () => streams.at(-1)!.close(),
    calls: (suffix: string) => fetch.calls.filter((c) => c.path === `/sandboxes/${ID}${suffix}`).length,
  };
}

/** A tab: the SSE text it received, split into frames. */
function tab(): LiveSubscriber & { text: string; ended: boolean; frames(event?: string): string[] } {
  const t = {
    text: "",
    ended: false,
    send(s: string) {
      t.text += s;
    },
    end() {
      t.ended = true;
    },
    frames(event?: string) {
      return t.text
        .split("\n\n")
        .filter((f) => f && (event === undefined ? !f.includes("event:") : f.includes(`event: ${event}\n`)));
    },
  };
  return t;
}

describe("SandboxHub", () => {
  it("reads the upstream once for every tab watching the sandbox and pushes each read to all of them", async () => {
    const up = upstream();
    const { timers, fire } = manualTimers();
    const hubs = new HubRegistry(timers);
    const hub = hubs.get("conn1:sbx", ID, () => up.client);
    await hub.ready;
    const a = tab();
    const b = tab();
    hub.subscribe(a);
    expect(hubs.get("conn1:sbx", ID, () => up.client)).toBe(hub);
    hub.subscribe(b);
    await settle();
    await fire(1_000); // the next metrics read
    await fire(1_000);
    expect(up.calls("")).toBe(1);
    expect(up.calls("/metrics")).toBe(3);
    expect(up.calls("/events")).toBe(1);
    for (const t of [a, b]) {
      expect(t.frames("sandbox")).toHaveLength(1);
      expect(t.frames("metrics").length).toBeGreaterThanOrEqual(2);
    }
    // Each metrics read asks only for samples after the newest one it already pushed.
    const sinces = up.fetch.calls.filter((c) => c.path.endsWith("/metrics")).map((c) => c.query.get("since"));
    expect(sinces).toEqual([null, "1700000001", "1700000002"]);
  });

  it("gives a late tab the sandbox and the timeline so far, or only what follows its cursor", async () => {
    const up = upstream();
    const { timers } = manualTimers();
    const hub = new SandboxHub(ID, up.client, () => {}, timers);
    await hub.ready;
    await settle();
    up.emit("ev_1", "sandbox.created");
    up.emit("ev_2", "exec");
    await settle();
    const late = tab();
    hub.subscribe(late);
    expect(late.frames("sandbox")).toHaveLength(1);
    expect(late.frames().map((f) => /id: (\S+)/.exec(f)?.[1])).toEqual(["ev_1", "ev_2"]);
    const resumed = tab();
    hub.subscribe(resumed, "ev_1");
    expect(resumed.frames().map((f) => /id: (\S+)/.exec(f)?.[1])).toEqual(["ev_2"]);
    up.emit("ev_3", "exec");
    await settle();
    expect(resumed.frames().map((f) => /id: (\S+)/.exec(f)?.[1])).toEqual(["ev_2", "ev_3"]);
    hub.stop();
  });

  it("catches a tab up from a cursor it has not seen, holding live events back so none is missed or repeated", async () => {
    const up = upstream();
    const { timers } = manualTimers();
    up.past("ev_1", "sandbox.created");
    up.past("ev_2", "exec");
    up.past("ev_3", "exec");
    // The first tab resumed after ev_3: the upstream follow starts there.
    const hub = new SandboxHub(ID, up.client, () => {}, timers, "ev_3");
    await hub.ready;
    await settle();
    expect(up.fetch.calls.find((c) => c.query.get("follow") === "true")!.headers.get("last-event-id")).toBe("ev_3");
    const first = tab();
    hub.subscribe(first, "ev_3");
    up.emit("ev_4", "exec");
    await settle();
    // A second tab that last saw ev_1: ev_2 and ev_3 come from the paged endpoint, ev_4 once.
    const behind = tab();
    hub.subscribe(behind, "ev_1");
    up.emit("ev_5", "exec");
    await settle();
    const ids = (t: ReturnType<typeof tab>) => t.frames().map((f) => /id: (\S+)/.exec(f)?.[1]);
    expect(ids(behind)).toEqual(["ev_2", "ev_3", "ev_4", "ev_5"]);
    expect(ids(first)).toEqual(["ev_4", "ev_5"]);
    hub.stop();
  });

  it("re-reads the sandbox at once on a lifecycle event and pushes it only when it changed", async () => {
    const up = upstream();
    const { timers, fire } = manualTimers();
    const hub = new SandboxHub(ID, up.client, () => {}, timers);
    await hub.ready;
    const t = tab();
    hub.subscribe(t);
    await settle();
    up.setSandbox({ status: "paused" });
    up.emit("ev_1", "sandbox.paused");
    await settle();
    await fire(0); // the read a lifecycle event schedules has no delay
    expect(up.calls("")).toBe(2);
    expect(t.frames("sandbox").map((f) => JSON.parse(f.split("data: ")[1]!).status)).toEqual(["running", "paused"]);
    up.emit("ev_2", "sandbox.updated");
    await settle();
    await fire(0);
    expect(up.calls("")).toBe(3);
    expect(t.frames("sandbox")).toHaveLength(2); // read again, unchanged: not pushed
    hub.stop();
  });

  it("ends every tab's stream with an end frame when the sandbox's history ends, and the next tab gets a new hub", async () => {
    const up = upstream();
    const { timers } = manualTimers();
    const hubs = new HubRegistry(timers);
    const hub = hubs.get("k", ID, () => up.client);
    await hub.ready;
    const t = tab();
    const unsubscribe = hub.subscribe(t);
    await settle();
    up.endStream();
    await settle();
    expect(t.ended).toBe(true);
    expect(t.frames("end")).toHaveLength(1);
    unsubscribe();
    const again = hubs.get("k", ID, () => up.client);
    expect(again).not.toBe(hub);
    await again.ready;
    again.stop();
  });

  it("stops reading the upstream when the last tab leaves", async () => {
    const up = upstream();
    const { timers, pending } = manualTimers();
    const hubs = new HubRegistry(timers);
    const hub = hubs.get("k", ID, () => up.client);
    await hub.ready;
    const leave = hub.subscribe(tab());
    await settle();
    expect(pending.size).toBeGreaterThan(0);
    leave();
    expect(hub.isStopped).toBe(true);
    expect(pending.size).toBe(0);
    expect(hubs.count).toBe(0);
    const follow = up.fetch.calls.find((c) => c.path.endsWith("/events"))!;
    expect(follow.signal?.aborted).toBe(true);
  });

  it("fails a tab's join with the upstream's error when the first read fails, and keeps no hub", async () => {
    const up = upstream({ status: 404 });
    const hubs = new HubRegistry(manualTimers().timers);
    const hub = hubs.get("k", ID, () => up.client);
    const err = await hub.ready.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OrkestrError);
    expect((err as OrkestrError).status).toBe(404);
    await settle();
    expect(hubs.count).toBe(0);
    expect(hub.isStopped).toBe(true);
  });
});
