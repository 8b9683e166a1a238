import type { TelemetrySample } from "./row-telemetry";

const W = 72;
const H = 28;

/** SVG path through the points; a null value (not sampled) or a gap in time breaks the line. */
function pathFor(
  samples: readonly TelemetrySample[],
  pick: (s: TelemetrySample) => number | null,
  from: number,
  span: number,
): string {
  let d = "";
  let prevT: number | null = null;
  // A hole longer than this between two samples is drawn as a gap (the sandbox was paused).
  const maxStep = 15_000;
  for (const s of samples) {
    const v = pick(s);
    if (v === null) {
      prevT = null;
      continue;
    }
    const x = ((s.t - from) / span) * W;
    const y = H - 1 - (Math.min(100, Math.max(0, v)) / 100) * (H - 2);
    d += `${prevT === null || s.t - prevT > maxStep ? "M" : "L"}${x.toFixed(1)},${y.toFixed(1)}`;
    prevT = s.t;
  }
  return d;
}

/**
 * CPU (percent of the sandbox's cores) and memory (percent of its limit) over the sample window, as
 * two lines on a 0-100 % scale. Hand-drawn SVG: a chart library would cost the list page its budget.
 */
export function Sparkline({
  samples,
  windowMs,
  now,
  label,
}: {
  samples: readonly TelemetrySample[];
  windowMs: number;
  now: number;
  label: string;
}) {
  const from = now - windowMs;
  return (
    <svg role="img" aria-label={label} width={W} height={H} viewBox={`0 0 ${W} ${H}`} className="overflow-visible">
      <title>{label}</title>
      <line x1="0" x2={W} y1={H - 0.5} y2={H - 0.5} className="stroke-border" strokeWidth="1" />
      <path
        d={pathFor(samples, (s) => s.mem, from, windowMs)}
        fill="none"
        className="stroke-success"
        strokeWidth="1.5"
        strokeLinejoin="round"
      />
      <path
        d={pathFor(samples, (s) => s.cpu, from, windowMs)}
        fill="none"
        className="stroke-primary"
        strokeWidth="1.5"
        strokeLinejoin="round"
      />
    </svg>
  );
}
