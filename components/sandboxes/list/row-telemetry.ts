import { errorText } from "../../../lib/orkestr/errors";
import { toMs } from "../../../lib/orkestr/timestamp";
import { fetchExecEvents } from "../../../lib/queries/events";
import { fetchSandboxMetrics } from "../../../lib/queries/sandboxes";
import { IDLE_WINDOW_MS, isCpuQuiet } from "./idle";
import { isFinished } from "../../../lib/sandbox-status";

// Live CPU, memory and cost for the rows on screen, and the exec check behind the idle flag.
//
// A store outside React rather than one TanStack query per row: with 10,000 rows only the ~20 on
// screen may be read, never more than MAX_IN_FLIGHT at once, incrementally (`since=` the newest
// sample held), and not at all while the tab is hidden or while the table is scrolling fast. Rows
// subscribe to their own entry, so a reading re-renders one row, not the table.

/** Requests in flight at once, metrics and events together. */
const MAX_IN_FLIGHT = 4;
/** A row must stay on screen this long before it is read (fast scrolling reads nothing). */
const SETTLE_MS = 250;
const REFRESH_MS: Record<"live" | "quiet", number> = { live: 10_000, quiet: 60_000 };
/** The exec check behind the idle flag runs at most this often per row, and only for quiet rows. */
const EXEC_CHECK_MS = 60_000;
const RETRY_AFTER_ERROR_MS = 30_000;

export interface TelemetrySample {
  /** ms since the epoch. */
  t: number;
  /** Percent of the sandbox's cores; null while not sampled. */
  cpu: number | null;
  /** Percent of the memory limit. */
  mem: number | null;
}

export interface RowTelemetry {
  /** Samples of the last IDLE_WINDOW_MS, oldest first. */
  samples: TelemetrySample[];
  cpuPercent: number | null;
  memBytes: number | null;
  memPercent: number | null;
  /**
   * Lifetime totals: on-CPU seconds and GiB-seconds of working set, null while not reported. The
   * cost is priced from them where it is shown (CostCell), at the team's rate card.
   */
  cpuSeconds: number | null;
  gbSeconds: number | null;
  /** Newest exec time (ms), null for none, undefined until checked. */
  lastExecAt: number | null | undefined;
  error: string | null;
  updatedAt: number;
}

interface Entry {
  status: string;
  data: RowTelemetry | null;
  nextMetricsAt: number;
  nextExecAt: number;
  /** Cursor of the last partial page of exec events: the next check starts there. */
  execCursor: string | null;
  inFlight: boolean;
  listeners: Set<() => void>;
}

const num = (v: unknown): number | null =>
  typeof v === "number" && Number.isFinite(v)
    ? v
    : typeof v === "string" && v !== "" && Number.isFinite(Number(v))
      ? Number(v)
      : null;

export class TelemetryStore {
  private entries = new Map<string, Entry>();
  private visible: string[] = [];
  private settleTimer: ReturnType<typeof setTimeout> | null = null;
  private tick: ReturnType<typeof setInterval> | null = null;
  private inFlight = 0;
  private abort = new AbortController();

  constructor(private readonly now: () => number = Date.now) {}

  /** The rows on screen now (id and status), in display order. Called on every scroll frame: cheap. */
  setVisible(rows: readonly { id: string; status: string }[]): void {
    for (const { id, status } of rows) {
      const entry = this.entry(id);
      if (entry.status !== status) {
        // A status change (paused, resumed) makes the old schedule wrong: read again soon.
        entry.status = status;
        entry.nextMetricsAt = 0;
      }
    }
    const ids = rows.map((r) => r.id);
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => {
      this.visible = ids;
      this.pump();
    }, SETTLE_MS);
  }

  start(): void {
    if (this.tick) return;
    this.abort = new AbortController();
    this.tick = setInterval(() => this.pump(), 1_000);
    document.addEventListener("visibilitychange", this.onVisibility);
  }

  stop(): void {
    if (this.tick) clearInterval(this.tick);
    this.tick = null;
    if (this.settleTimer) clearTimeout(this.settleTimer);
    document.removeEventListener("visibilitychange", this.onVisibility);
    this.abort.abort();
    this.inFlight = 0;
    for (const e of this.entries.values()) e.inFlight = false;
  }

  get(id: string): RowTelemetry | null {
    return this.entries.get(id)?.data ?? null;
  }

  subscribe(id: string, listener: () => void): () => void {
    const entry = this.entry(id);
    entry.listeners.add(listener);
    return () => entry.listeners.delete(listener);
  }

  private onVisibility = () => {
    if (!document.hidden) this.pump();
  };

  private entry(id: string): Entry {
    let entry = this.entries.get(id);
    if (!entry) {
      entry = {
        status: "",
        data: null,
        nextMetricsAt: 0,
        nextExecAt: 0,
        execCursor: null,
        inFlight: false,
        listeners: new Set(),
      };
      this.entries.set(id, entry);
    }
    return entry;
  }

  /** Starts the reads that are due for visible rows, up to MAX_IN_FLIGHT. */
  private pump(): void {
    if (!this.tick || document.hidden) return;
    const now = this.now();
    for (const id of this.visible) {
      if (this.inFlight >= MAX_IN_FLIGHT) return;
      const entry = this.entries.get(id);
      if (!entry || entry.inFlight) continue;
      if (entry.nextMetricsAt <= now) void this.run(id, entry, () => this.readMetrics(id, entry));
      else if (this.execCheckDue(entry, now)) void this.run(id, entry, () => this.readExecs(id, entry));
    }
  }

  private execCheckDue(entry: Entry, now: number): boolean {
    return entry.status === "running" && entry.nextExecAt <= now && !!entry.data && isCpuQuiet(entry.data.samples, now);
  }

  private async run(id: string, entry: Entry, read: () => Promise<void>): Promise<void> {
    entry.inFlight = true;
    this.inFlight++;
    const signal = this.abort.signal;
    try {
      await read();
    } catch (err) {
      if (signal.aborted) return;
      const detail = errorText(err, "Could not read this sandbox's metrics.");
      entry.nextMetricsAt = this.now() + RETRY_AFTER_ERROR_MS;
      this.update(entry, { ...(entry.data ?? emptyTelemetry()), error: detail });
    } finally {
      if (!signal.aborted) {
        entry.inFlight = false;
        this.inFlight--;
        // Keep the pipe full: the next due row starts as soon as this one is done.
        queueMicrotask(() => this.pump());
      }
    }
  }

  private async readMetrics(id: string, entry: Entry): Promise<void> {
    const now = this.now();
    const held = entry.data?.samples ?? [];
    const newest = held.length ? held[held.length - 1]!.t : now - IDLE_WINDOW_MS;
    const since = (Math.max(newest, now - IDLE_WINDOW_MS) / 1000).toFixed(3);
    const m = await fetchSandboxMetrics(id, since, this.abort.signal);
    const limit = num(m.memory?.limit_bytes);
    const fresh: TelemetrySample[] = [];
    for (const s of m.samples ?? []) {
      const t = toMs(s.t);
      if (t === null || t <= newest) continue;
      const mem = num(s.mem_bytes);
      fresh.push({ t, cpu: num(s.cpu_percent), mem: mem !== null && limit ? (mem / limit) * 100 : null });
    }
    const samples = [...held, ...fresh].filter((s) => s.t >= now - IDLE_WINDOW_MS);
    const cpuSeconds = num(m.lifetime?.cpu_seconds);
    const gbSeconds = num(m.lifetime?.gb_seconds);
    const status = m.sandbox_status ?? entry.status;
    // A finished sandbox's metrics cannot change any more: read once.
    entry.nextMetricsAt = isFinished(status)
      ? Number.POSITIVE_INFINITY
      : now + (status === "running" ? REFRESH_MS.live : REFRESH_MS.quiet);
    this.update(entry, {
      samples,
      cpuPercent: num(m.cpu?.usage_percent),
      memBytes: num(m.memory?.usage_bytes),
      memPercent: num(m.memory?.usage_percent),
      cpuSeconds,
      gbSeconds,
      lastExecAt: entry.data?.lastExecAt,
      error: null,
      updatedAt: now,
    });
  }

  /** Reads exec events from where the last check stopped, to the end (opaque cursors, oldest first). */
  private async readExecs(id: string, entry: Entry): Promise<void> {
    let cursor = entry.execCursor;
    let newest = entry.data?.lastExecAt ?? null;
    let complete = false;
    for (let pages = 0; pages < 20 && !complete; pages++) {
      const page = await fetchExecEvents(id, cursor, this.abort.signal);
      for (const e of page.items) {
        const t = toMs(e.t ?? e.created_at);
        if (t !== null && (newest === null || t > newest)) newest = t;
      }
      if (page.nextCursor) cursor = page.nextCursor;
      else complete = true;
    }
    entry.execCursor = cursor;
    // Not at the end yet (a long history): carry on at the next tick, and claim nothing meanwhile.
    entry.nextExecAt = complete ? this.now() + EXEC_CHECK_MS : 0;
    if (entry.data) this.update(entry, { ...entry.data, lastExecAt: complete ? newest : undefined });
  }

  private update(entry: Entry, data: RowTelemetry): void {
    entry.data = data;
    for (const l of entry.listeners) l();
  }
}

function emptyTelemetry(): RowTelemetry {
  return {
    samples: [],
    cpuPercent: null,
    memBytes: null,
    memPercent: null,
    cpuSeconds: null,
    gbSeconds: null,
    lastExecAt: undefined,
    error: null,
    updatedAt: 0,
  };
}
