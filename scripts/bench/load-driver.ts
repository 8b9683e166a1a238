// The load generator of `scripts/bench-load.ts`, in its own process so the browsers it simulates
// never share an event loop (or a CPU budget) with the servers' parent. It reads its job as JSON
// from argv[2] and prints one JSON result line when done.
//
// Each simulated browser has the two tabs of the budget open, making the requests the console's own
// code makes (the intervals are imported from the hooks, so they cannot drift apart):
// - the sandbox list (components/sandboxes/list/sandbox-list.tsx): GET /api/v1/sandboxes?limit=100
//   every listRefreshIntervalMs(1); optionally the row telemetry of the rows on screen
//   (row-telemetry.ts: metrics every 10 s per running row, at most 4 in flight), off by default
//   because the budget's scenario leaves it out;
// - a sandbox page (components/sandboxes/detail/): metrics once, the events backlog once, and then
//   the page's live stream (GET /live: the sandbox, metrics and timeline pushed), held open for the
//   whole run; with tab "poll", the page as it was before that stream: the sandbox every
//   DETAIL_POLL_MS, metrics with `since=` the newest sample at the engine's sample interval, and the
//   events follow stream;
// - the shell's connection status every CONNECTION_STATUS_POLL_MS.
// Plain node:http with keep-alive agents: a browser keeps its connections open too.
import http from "node:http";
import { performance } from "node:perf_hooks";
import { CONNECTION_STATUS_POLL_MS } from "../../lib/queries/connections";
import { LIST_PAGE_SIZE, listRefreshIntervalMs } from "../../lib/queries/sandbox-list";
import { DETAIL_POLL_MS } from "../../lib/queries/sandboxes";

export interface DriverJob {
  origin: string;
  /** Session cookies (`name=value; …`); browser i uses cookies[i % length]. */
  cookies: string[];
  /** Sandbox ids; browser i opens sandboxIds[i % length]. */
  sandboxIds: string[];
  browsers: number;
  warmupMs: number;
  measureMs: number;
  /** Rows on screen whose telemetry the list reads (0: none). */
  listRows: number;
  /**
   * How a sandbox page stays current: "live" (today's page: one GET /live stream carries the
   * sandbox, metrics and timeline) or "poll" (the page before it: the sandbox every 5 s, metrics
   * every second and the events follow stream), for comparing the two against one server.
   */
  tab: "live" | "poll";
}

export interface KindStats {
  count: number;
  /** Latencies (ms) of the requests started inside the measured window. */
  ms: number[];
}

export interface DriverResult {
  measuredMs: number;
  kinds: Record<string, KindStats>;
  /** Errors by `kind status` or `kind code`, measured window only. */
  errors: Record<string, number>;
  /** SSE streams: opened, still open at the end, dropped while measured, frames received (pushes: named ones). */
  streams: { opened: number; openAtEnd: number; dropped: number; frames: number; pushes: number };
  /** The driver's own CPU over the measured window, percent of one core. */
  cpuPercent: number;
}

const METRICS_MIN_MS = 1_000;
const ROW_METRICS_MS = 10_000;
const ROW_IN_FLIGHT = 4;
const TIMEOUT_MS = 30_000;

const job = JSON.parse(process.argv[2]!) as DriverJob;
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 4096 });
const streamAgent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
const started = performance.now();
// The measured window starts once every page is open (each browser's stream answered) and at least
// warmupMs have passed, so a slow start on a busy machine is not measured as steady load; the
// parent hears "measuring" on stdout and samples the servers' CPU from then.
let measureFrom = Number.POSITIVE_INFINITY;
let measureTo = Number.POSITIVE_INFINITY;
/** The longest the warm-up may stretch waiting for pages to open. */
const WARMUP_MAX_FACTOR = 6;
const kinds: Record<string, KindStats> = {};
const errors: Record<string, number> = {};
const streams = { opened: 0, openAtEnd: 0, dropped: 0, frames: 0, pushes: 0 };
let stopping = false;
const timers = new Set<NodeJS.Timeout>();

const inWindow = (t: number) => t >= measureFrom && t < measureTo;

function later(ms: number, fn: () => void): void {
  if (stopping) return;
  const t = setTimeout(() => {
    timers.delete(t);
    if (!stopping) fn();
  }, ms);
  timers.add(t);
}

function countError(kind: string, what: string | number, at: number): void {
  if (!inWindow(at)) return;
  const key = `${kind} ${what}`;
  errors[key] = (errors[key] ?? 0) + 1;
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One GET as the browser core makes it; records latency and errors under `kind`. Null on failure. */
function get(
  kind: string,
  cookie: string,
  path: string,
  t0 = performance.now(),
  retried = false,
): Promise<Answer | null> {
  return new Promise((resolve) => {
    const req = http.request(
      `${job.origin}${path}`,
      { agent, headers: { cookie, accept: "application/json" }, timeout: TIMEOUT_MS },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", () => {
          countError(kind, "reset", t0);
          resolve(null);
        });
        res.on("end", () => {
          const ms = performance.now() - t0;
          const status = res.statusCode ?? 0;
          if (inWindow(t0)) {
            const k = (kinds[kind] ??= { count: 0, ms: [] });
            k.count += 1;
            k.ms.push(ms);
          }
          if (status >= 400) {
            countError(kind, status, t0);
            resolve(null);
          } else resolve({ status, headers: res.headers, body: Buffer.concat(chunks).toString() });
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", (err: NodeJS.ErrnoException) => {
      // A kept-alive connection the server closed just as it was reused: browsers send the request
      // again on a fresh connection, unseen by the page, and so does this (once).
      if (req.reusedSocket && err.code === "ECONNRESET" && !retried) {
        resolve(get(kind, cookie, path, t0, true));
        return;
      }
      countError(kind, err.message === "timeout" ? "timeout" : (err.code ?? "network"), t0);
      resolve(null);
    });
    req.end();
  });
}

/** Repeats `fn` every `ms` (measured from the end of the last run, as TanStack's refetchInterval does). */
function every(ms: number, fn: () => Promise<unknown>): void {
  const loop = async () => {
    await fn();
    later(ms, () => void loop());
  };
  void loop();
}

function listPage(cookie: string): void {
  const interval = listRefreshIntervalMs(1) || 5_000;
  const rows = job.sandboxIds.slice(0, job.listRows);
  every(interval, () => get("list", cookie, `/api/v1/sandboxes?limit=${LIST_PAGE_SIZE}`));
  if (!rows.length) return;
  // Row telemetry: each running row's metrics every 10 s, never more than 4 in flight.
  const due = rows.map((id, i) => ({ id, at: performance.now() + (i * ROW_METRICS_MS) / rows.length }));
  let inFlight = 0;
  const pump = () => {
    const now = performance.now();
    for (const row of due) {
      if (inFlight >= ROW_IN_FLIGHT) break;
      if (row.at > now) continue;
      row.at = Number.POSITIVE_INFINITY;
      inFlight += 1;
      const since = ((Date.now() - 60_000) / 1000).toFixed(3);
      void get("row metrics", cookie, `/api/v1/sandboxes/${row.id}/metrics?since=${since}`).then(() => {
        inFlight -= 1;
        row.at = performance.now() + ROW_METRICS_MS;
      });
    }
    later(250, pump);
  };
  pump();
}

async function detailPage(cookie: string, id: string): Promise<void> {
  if (job.tab === "poll") {
    every(DETAIL_POLL_MS, () => get("sandbox", cookie, `/api/v1/sandboxes/${id}`));
    let since: string | number | null = null;
    const metrics = async () => {
      const q = since === null ? "" : `?since=${encodeURIComponent(String(since))}`;
      const a = await get("metrics", cookie, `/api/v1/sandboxes/${id}/metrics${q}`);
      let delay = METRICS_MIN_MS;
      if (a) {
        const m = JSON.parse(a.body) as { samples?: { t: string | number }[]; sample_interval_seconds?: number };
        const last = m.samples?.at(-1);
        if (last) since = last.t;
        if (m.sample_interval_seconds) delay = Math.max(METRICS_MIN_MS, m.sample_interval_seconds * 1000);
      }
      later(delay, () => void metrics());
    };
    void metrics();
  } else {
    // The metrics hook reads the history once; the stream brings the rest.
    void get("metrics", cookie, `/api/v1/sandboxes/${id}/metrics`);
  }
  // The timeline: every page of the backlog, then the live stream.
  // The hook opens the stream without a cursor (it resumes only from ids the stream itself sent).
  let cursor: string | null = null;
  for (let page = 0; page < 20; page++) {
    const q = cursor ? `?cursor=${encodeURIComponent(cursor)}` : "";
    const a = await get("events page", cookie, `/api/v1/sandboxes/${id}/events${q}`);
    if (!a) break;
    cursor = (a.headers["x-next-cursor"] as string | undefined) ?? null;
    if (!cursor) break;
  }
  follow(cookie, id, null);
}

/** The EventSource: reconnects after a drop (as the browser does, after its retry delay) with Last-Event-ID. */
function follow(cookie: string, id: string, lastId: string | null): void {
  if (stopping) return;
  const t0 = performance.now();
  const headers: Record<string, string> = { cookie, accept: "text/event-stream" };
  if (lastId) headers["last-event-id"] = lastId;
  const url = job.tab === "poll" ? `/api/v1/sandboxes/${id}/events?follow=true` : `/api/v1/sandboxes/${id}/live`;
  const req = http.request(`${job.origin}${url}`, {
    agent: streamAgent,
    headers,
  });
  let open = false;
  const dropped = (what: string) => {
    if (stopping) return;
    if (open) streams.openAtEnd -= 1;
    countError("stream", what, performance.now());
    if (open && inWindow(performance.now())) streams.dropped += 1;
    open = false;
    later(3_000, () => follow(cookie, id, lastId));
  };
  req.on("response", (res) => {
    const ms = performance.now() - t0;
    if (inWindow(t0)) {
      const k = (kinds["stream open"] ??= { count: 0, ms: [] });
      k.count += 1;
      k.ms.push(ms);
    }
    if (res.statusCode !== 200) {
      if (process.env.BENCH_DEBUG)
        res.on("data", (d: Buffer) => process.stderr.write(`stream ${res.statusCode}: ${d}\n`));
      res.resume();
      dropped(String(res.statusCode));
      return;
    }
    open = true;
    streams.opened += 1;
    streams.openAtEnd += 1;
    let buf = "";
    res.setEncoding("utf8");
    res.on("data", (chunk: string) => {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.startsWith("id:")) lastId = line.slice(3).trim();
        else if (line.startsWith("event:")) streams.pushes += 1;
        else if (line.startsWith("data:")) streams.frames += 1;
      }
    });
    res.on("end", () => dropped("ended"));
    res.on("error", () => dropped("reset"));
  });
  req.on("error", (err: NodeJS.ErrnoException) => dropped(err.code ?? "network"));
  req.end();
  activeStreams.add(req);
}
const activeStreams = new Set<http.ClientRequest>();

function browser(i: number): void {
  const cookie = job.cookies[i % job.cookies.length]!;
  const id = job.sandboxIds[i % job.sandboxIds.length]!;
  listPage(cookie);
  void detailPage(cookie, id);
  every(CONNECTION_STATUS_POLL_MS, () => get("connection status", cookie, "/api/connections/status"));
}

// Browsers open their pages spread over the first half of the warm-up, as a team arriving.
const spread = job.warmupMs / 2;
for (let i = 0; i < job.browsers; i++) setTimeout(() => browser(i), (i * spread) / job.browsers);

let cpuAtStart: NodeJS.CpuUsage | null = null;
const startMeasuring = () => {
  measureFrom = performance.now();
  measureTo = measureFrom + job.measureMs;
  cpuAtStart = process.cpuUsage();
  process.stdout.write("measuring\n");
  setTimeout(finish, job.measureMs);
};
const waitForPages = () => {
  const waited = performance.now() - started;
  if (waited >= job.warmupMs && (streams.opened >= job.browsers || waited >= job.warmupMs * WARMUP_MAX_FACTOR))
    startMeasuring();
  else setTimeout(waitForPages, 250);
};
setTimeout(waitForPages, job.warmupMs);
const finish = () => {
  const cpu = process.cpuUsage(cpuAtStart ?? undefined);
  stopping = true;
  for (const t of timers) clearTimeout(t);
  for (const r of activeStreams) r.destroy();
  const result: DriverResult = {
    measuredMs: job.measureMs,
    kinds,
    errors,
    streams,
    cpuPercent: ((cpu.user + cpu.system) / 1000 / job.measureMs) * 100,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  agent.destroy();
  process.exit(0);
};
