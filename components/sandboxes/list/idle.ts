// When a sandbox counts as idle: a leftover that still costs memory and could be cleaned up.
// The list explains the same rule in the flag's tooltip (IDLE_RULE_TEXT), so keep the two together.

/** How long a sandbox must sit without CPU use and without exec to be flagged. */
export const IDLE_WINDOW_MS = 10 * 60_000;
/** CPU use at or below this percentage of the sandbox's cores counts as "near zero". */
export const IDLE_CPU_PERCENT = 2;
/** Samples may start a little after the window does (sampling interval, request timing). */
const COVERAGE_SLACK_MS = 30_000;

export const IDLE_RULE_TEXT = `Idle: running, CPU at or below ${IDLE_CPU_PERCENT}% for the last ${IDLE_WINDOW_MS / 60_000} minutes and no command executed in that time. It still holds its memory; pause or terminate it if it is a leftover.`;

export interface IdleInput {
  status: string;
  /** CPU samples (percent of the sandbox's cores) with their times in ms, oldest first. */
  samples: readonly { t: number; cpu: number | null }[];
  /** Time of the newest exec; null when it never ran one; undefined when not known (yet). */
  lastExecAt: number | null | undefined;
  now: number;
}

/** True only when every condition is known to hold: an unknown never raises the flag. */
export function isIdle({ status, samples, lastExecAt, now }: IdleInput): boolean {
  if (status !== "running") return false;
  if (!isCpuQuiet(samples, now)) return false;
  if (lastExecAt === undefined) return false;
  return lastExecAt === null || now - lastExecAt >= IDLE_WINDOW_MS;
}

/** The samples cover the whole window and none of them is above the threshold. */
export function isCpuQuiet(samples: readonly { t: number; cpu: number | null }[], now: number): boolean {
  const inWindow = samples.filter((s) => s.t >= now - IDLE_WINDOW_MS);
  if (inWindow.length === 0) return false;
  if (inWindow[0]!.t > now - IDLE_WINDOW_MS + COVERAGE_SLACK_MS) return false;
  return inWindow.every((s) => s.cpu !== null && s.cpu <= IDLE_CPU_PERCENT);
}
