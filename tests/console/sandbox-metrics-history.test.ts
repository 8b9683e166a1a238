import { describe, expect, it } from "vitest";
import { emptyHistory, mergeMetrics, sinceParam, timeTicks } from "../../components/sandboxes/detail/metrics-history";
import type { Metrics } from "../../lib/orkestr/schemas/metrics";

const T0 = Date.parse("2025-06-01T12:00:00Z");
const iso = (s: number) => new Date(T0 + s * 1000).toISOString();

function running(samples: [number, number][]): Metrics {
  return {
    sandbox_status: "running",
    sample_interval_seconds: 1,
    memory: { limit_bytes: 1000 },
    samples: samples.map(([s, cpu]) => ({ t: iso(s), cpu_percent: cpu, mem_bytes: 100 })),
  };
}

describe("mergeMetrics", () => {
  it("accumulates samples once each, and `since` follows the newest", () => {
    let h = mergeMetrics(
      emptyHistory(),
      running([
        [0, 5],
        [1, 6],
      ]),
      T0 + 1500,
    );
    h = mergeMetrics(
      h,
      running([
        [1, 6],
        [2, 7],
      ]),
      T0 + 2500,
    ); // a `since` read inclusively
    expect(h.points.map((p) => p.cpu)).toEqual([5, 6, 7]);
    expect(h.points[0]!.memPct).toBe(10);
    expect(h.since).toBe(iso(2));
    expect(h.intervalMs).toBe(1000);
  });

  it("draws a paused stretch as a gap (null points and a period), never as zeros", () => {
    let h = mergeMetrics(
      emptyHistory(),
      running([
        [0, 50],
        [1, 50],
      ]),
      T0 + 1500,
    );
    h = mergeMetrics(h, { sandbox_status: "paused", samples: [] }, T0 + 5000);
    h = mergeMetrics(h, { sandbox_status: "paused", samples: [] }, T0 + 9000);
    expect(h.periods).toEqual([{ status: "paused", from: T0 + 1000, to: null }]);
    h = mergeMetrics(h, running([[20, 40]]), T0 + 20_500);
    expect(h.periods).toEqual([{ status: "paused", from: T0 + 1000, to: T0 + 20_000 }]);
    const cpu = h.points.map((p) => p.cpu);
    expect(cpu).not.toContain(0);
    expect(cpu.slice(0, 2)).toEqual([50, 50]);
    expect(cpu.slice(2, -1).every((c) => c === null)).toBe(true);
    expect(cpu[cpu.length - 1]).toBe(40);
  });

  it("breaks the line over a hole in the samples (a hidden tab)", () => {
    let h = mergeMetrics(emptyHistory(), running([[0, 1]]), T0);
    h = mergeMetrics(h, running([[60, 2]]), T0 + 60_000);
    expect(h.points.map((p) => p.cpu)).toEqual([1, null, 2]);
  });

  it("keeps the window and drops older points", () => {
    let h = mergeMetrics(emptyHistory(), running([[0, 1]]), T0);
    h = mergeMetrics(h, running([[3600, 2]]), T0 + 3600_000);
    expect(h.points.map((p) => p.cpu)).toEqual([2]);
  });

  it("passes `since` back as sent (ISO) or as unix seconds", () => {
    expect(sinceParam("2025-06-01T12:00:00Z")).toBe("2025-06-01T12:00:00Z");
    expect(sinceParam(1717243200)).toBe("1717243200");
    expect(sinceParam(1717243200000)).toBe("1717243200");
    expect(sinceParam(null)).toBeNull();
  });
});

describe("timeTicks", () => {
  const t0 = Date.UTC(2026, 11, 3, 20, 0, 0);

  it("puts round clock times inside the domain, none at its very ends (their labels would be cut off)", () => {
    // One minute: every 15 s; 60 s is too close to the right end.
    expect(timeTicks(t0 + 3_000, t0 + 63_000)).toEqual([15, 30, 45].map((s) => t0 + s * 1000));
    // Thirty minutes: every 10 minutes, neither end.
    expect(timeTicks(t0 - 30 * 60_000, t0)).toEqual([-20, -10].map((m) => t0 + m * 60_000));
  });

  it("never gives more than asked, nor a tick outside the domain", () => {
    for (const span of [1_000, 59_000, 61_000, 7 * 60_000, 29 * 60_000, 31 * 60_000, 5 * 3_600_000]) {
      const ticks = timeTicks(t0, t0 + span);
      expect(ticks.length).toBeLessThanOrEqual(4);
      for (const t of ticks) expect(t >= t0 && t <= t0 + span).toBe(true);
    }
  });
});
