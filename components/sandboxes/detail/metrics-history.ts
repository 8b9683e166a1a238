// The live charts' memory: samples from successive GET /metrics?since= polls, accumulated
// client-side (the API's window is short), with honest gaps. A paused or terminated sandbox has no
// samples; the charts then show null points (a break in the line, not a drop to zero) and a
// shaded period. Pure functions, unit-tested in tests/console/sandbox-metrics-history.test.ts.

import type { Metrics } from "../../../lib/orkestr/schemas/metrics";
import { toMs, type WireTime } from "../../../lib/format";
import { isFinished } from "../../../lib/sandbox-status";

/** One chart point; nulls break the line. */
export interface MetricPoint {
  t: number;
  cpu: number | null;
  mem: number | null;
  memPct: number | null;
}

/** A stretch of time without samples because the sandbox was not running. */
export interface StatusPeriod {
  status: string;
  from: number;
  /** null while it lasts. */
  to: number | null;
}

export interface MetricsHistory {
  points: MetricPoint[];
  periods: StatusPeriod[];
  /** The newest sample's `t` as the server sent it: the next poll's `since`. */
  since: WireTime;
  /** The newest sample's time in ms. */
  lastSampleAt: number | null;
  intervalMs: number;
  limitBytes: number | null;
  latest: Metrics | null;
}

/** How much the charts keep: at least 15 minutes (the issue), 30 to leave room for a pause. */
export const HISTORY_WINDOW_MS = 30 * 60_000;
/** A hole longer than this many sample intervals is a gap, not jitter. */
const GAP_FACTOR = 3;
const DEFAULT_INTERVAL_MS = 5_000;
/** Polls no faster than this, whatever the server says. */
export const MIN_POLL_MS = 1_000;

export const emptyHistory = (): MetricsHistory => ({
  points: [],
  periods: [],
  since: null,
  lastSampleAt: null,
  intervalMs: DEFAULT_INTERVAL_MS,
  limitBytes: null,
  latest: null,
});

/** Merges one metrics answer read at `now` (ms) into the history. Returns a new object. */
export function mergeMetrics(
  history: MetricsHistory,
  m: Metrics,
  now: number,
  windowMs = HISTORY_WINDOW_MS,
): MetricsHistory {
  const intervalSeconds = Number(m.sample_interval_seconds);
  const intervalMs =
    Number.isFinite(intervalSeconds) && intervalSeconds > 0 ? intervalSeconds * 1000 : history.intervalMs;
  const limitBytes = Number(m.memory?.limit_bytes) > 0 ? Number(m.memory!.limit_bytes) : history.limitBytes;
  const points = [...history.points];
  let periods = history.periods.map((p) => ({ ...p }));
  let { since, lastSampleAt } = history;

  const samples = (m.samples ?? [])
    .map((s) => ({ raw: s.t, t: toMs(s.t), cpu: s.cpu_percent ?? null, mem: s.mem_bytes ?? null }))
    .filter((s): s is typeof s & { t: number } => s.t !== null)
    .sort((a, b) => a.t - b.t);

  for (const s of samples) {
    if (lastSampleAt !== null && s.t <= lastSampleAt) continue; // already have it (a `since` the server read inclusively)
    const open = periods.find((p) => p.to === null);
    if (open) open.to = s.t;
    const prev = points[points.length - 1];
    // A hole in the samples (the tab was hidden, the sandbox was paused): break the line.
    if (prev && prev.cpu !== null && s.t - prev.t > GAP_FACTOR * intervalMs)
      points.push({ t: prev.t + intervalMs, cpu: null, mem: null, memPct: null });
    points.push({
      t: s.t,
      cpu: s.cpu,
      mem: s.mem,
      memPct: s.mem !== null && limitBytes ? (s.mem / limitBytes) * 100 : null,
    });
    since = s.raw;
    lastSampleAt = s.t;
  }

  const status = m.sandbox_status ?? "running";
  if (status === "paused" || status === "pausing" || isFinished(status)) {
    const open = periods.find((p) => p.to === null);
    const kind = status === "pausing" ? "paused" : isFinished(status) ? "terminated" : status;
    if (!open) periods.push({ status: kind, from: lastSampleAt ?? now, to: null });
    else if (open.status !== kind) {
      open.to = now;
      periods.push({ status: kind, from: now, to: null });
    }
    // A null point now: the x axis keeps moving and the line stays broken (no fake zeros).
    const last = points[points.length - 1];
    if (!last || last.t < now) points.push({ t: now, cpu: null, mem: null, memPct: null });
  }
  // Running again but no sample yet (just resumed): the paused period stays open until the first one.

  const cutoff = now - windowMs;
  const kept = points.filter((p) => p.t >= cutoff);
  periods = periods.filter((p) => p.to === null || p.to >= cutoff);
  return { points: kept, periods, since, lastSampleAt, intervalMs, limitBytes, latest: m };
}

/** How long to wait before the next poll: the server's sample interval, never under MIN_POLL_MS. */
export function pollDelayMs(history: MetricsHistory): number {
  return Math.max(MIN_POLL_MS, history.intervalMs);
}

/** `since` for the query string: an ISO string as sent, or unix seconds. */
export function sinceParam(since: WireTime): string | null {
  if (since === null || since === undefined || since === "") return null;
  if (typeof since === "number") return String(since > 1e12 ? since / 1000 : since);
  return since;
}

/** Tick spacings for the time axis, from a few seconds to the whole window. */
const TICK_STEPS_MS = [5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600].map((s) => s * 1000);

/** No tick this close to either end (share of the span): a label centred there would be cut off. */
const TICK_EDGE = 0.08;

/**
 * The time axis' ticks: round clock times (multiples of one step) inside [from, to], away from its
 * ends, at most `max` of them. Given to the chart, they spare it measuring every candidate label's
 * text in the page (a forced layout per label on every redraw) to find which ones fit.
 */
export function timeTicks(from: number, to: number, max = 4): number[] {
  const span = Math.max(0, to - from);
  const step = TICK_STEPS_MS.find((s) => span / s <= max) ?? TICK_STEPS_MS[TICK_STEPS_MS.length - 1]!;
  const [first, last] = [from + span * TICK_EDGE, to - span * TICK_EDGE];
  const ticks: number[] = [];
  for (let t = Math.ceil(first / step) * step; t <= last && ticks.length < max; t += step) ticks.push(t);
  return ticks;
}
