// Spend caps (issue 22): the rules, pure and client-safe, so the server's job, the request-time
// check and the /usage page say the same thing. Storage and scheduling are lib/server/usage/.
//
// A cap is a limit in whole micro-euros on what a team, or one member within it, spends in a UTC
// window (a calendar month or a day). Alerts go out as spending crosses 50, 80 and 100 % of it,
// each once per window. At 100 % the cap acts as the admin chose: "alert" only, "block" (Baton's
// proxy refuses what would start or prolong spending: create, fork, resume, keep-alive, template
// builds) or "pause" (the running sandboxes in its scope are paused, then blocked as above).

import { formatMicro } from "../format";

export const CAP_WINDOWS = ["month", "day"] as const;
export type CapWindow = (typeof CAP_WINDOWS)[number];

export const CAP_ACTIONS = ["alert", "block", "pause"] as const;
export type CapAction = (typeof CAP_ACTIONS)[number];

/** The percentages of a cap at which an alert goes out, each once per window. */
export const ALERT_THRESHOLDS = [50, 80, 100] as const;
export type AlertThreshold = (typeof ALERT_THRESHOLDS)[number];

export interface SpendCap {
  id: string;
  teamId: string;
  /** null: the team's cap; else the member's within the team. */
  userId: string | null;
  window: CapWindow;
  limitMicro: number;
  action: CapAction;
}

/** The window a moment falls in, as its key: `YYYY-MM` for a month, `YYYY-MM-DD` for a day (UTC). */
export function windowKey(window: CapWindow, at: number): string {
  const iso = new Date(at).toISOString();
  return window === "month" ? iso.slice(0, 7) : iso.slice(0, 10);
}

/** Where the window that holds `at` starts and ends (exclusive), epoch ms, UTC. */
export function windowBounds(window: CapWindow, at: number): { start: number; end: number } {
  const d = new Date(at);
  if (window === "day") {
    const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    return { start, end: start + 86_400_000 };
  }
  return {
    start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1),
    end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1),
  };
}

/** Spent as a share of the limit, in percent (a cap of 0 is reached by anything, and at once). */
export function capPercent(spentMicro: number, limitMicro: number): number {
  if (limitMicro <= 0) return spentMicro > 0 ? Infinity : 100;
  return (spentMicro / limitMicro) * 100;
}

/** Whether the cap's limit is reached: from then on it acts (block or pause). */
export function capReached(cap: Pick<SpendCap, "limitMicro">, spentMicro: number): boolean {
  return spentMicro >= cap.limitMicro;
}

/**
 * The thresholds `spentMicro` has crossed that were not alerted yet in this window, lowest first.
 * A cap set below what is already spent crosses several at once: each is sent once.
 */
export function alertsDue(
  cap: Pick<SpendCap, "limitMicro">,
  spentMicro: number,
  alreadySent: ReadonlySet<number>,
): AlertThreshold[] {
  const pct = capPercent(spentMicro, cap.limitMicro);
  return ALERT_THRESHOLDS.filter((t) => pct >= t && !alreadySent.has(t));
}

/**
 * The highest alert threshold `percent` has crossed, or null below the first: what the console's
 * warning banner says, and what its dismissal is keyed on, so that dismissing the 50 % warning does
 * not hide the 80 % one when spending gets there.
 */
export function alertThresholdCrossed(percent: number): AlertThreshold | null {
  let crossed: AlertThreshold | null = null;
  for (const t of ALERT_THRESHOLDS) if (percent >= t) crossed = t;
  return crossed;
}

/**
 * What more could be spent before the job's next run sees the cap reached: the run-rate over the
 * time to that run. The page shows it beside each cap, since the job reads usage at intervals and
 * a sandbox already running spends until it is paused.
 */
export function possibleOvershootMicro(runRateMicroPerHour: number, msToNextRun: number): number {
  if (!(runRateMicroPerHour > 0) || !(msToNextRun > 0)) return 0;
  return Math.ceil((runRateMicroPerHour * msToNextRun) / 3_600_000);
}

/** Why a member's cap is refused, or null: it may not be higher than the team's for the same window. */
export function memberCapProblem(
  memberCap: Pick<SpendCap, "window" | "limitMicro">,
  teamCaps: readonly Pick<SpendCap, "window" | "limitMicro">[],
): string | null {
  const team = teamCaps.find((c) => c.window === memberCap.window);
  if (!team || memberCap.limitMicro <= team.limitMicro) return null;
  return (
    `A member's ${memberCap.window === "month" ? "monthly" : "daily"} cap (${formatMicro(memberCap.limitMicro)}) ` +
    `cannot be higher than the team's (${formatMicro(team.limitMicro)}).`
  );
}

// Money reads through the one formatter (lib/format.ts); re-exported for the cap messages' callers.
export { formatMicro };

/** The sentence a refusal by a reached cap (402 spend_cap_reached) says. */
export function capReachedDetail(input: {
  cap: Pick<SpendCap, "userId" | "window" | "limitMicro" | "action">;
  spentMicro: number;
  teamName: string;
  /** Who may raise it: "the team's owners" or "the team's owners and admins". */
  raisers: string;
  /** What was refused, e.g. "create a sandbox". */
  refused: string;
}): string {
  const { cap, spentMicro, teamName, raisers, refused } = input;
  const whose = cap.userId ? "Your" : `${teamName}'s`;
  const window = cap.window === "month" ? "monthly" : "daily";
  return (
    `${whose} ${window} spend cap of ${formatMicro(cap.limitMicro)} is reached (${formatMicro(spentMicro)} spent ` +
    `this ${cap.window === "month" ? "month" : "day"}, UTC), so Baton does not ${refused}. ` +
    (cap.action === "pause"
      ? "Its running sandboxes were paused and resume once the cap is raised. "
      : "Running sandboxes keep running. ") +
    `${raisers[0]!.toUpperCase()}${raisers.slice(1)} can raise the cap on the Usage page.`
  );
}
