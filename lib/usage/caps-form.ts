// The spend caps section of /usage, its words and its form: pure and client-safe. Amounts are typed
// in EUR and sent as whole micro-euros, read from the text itself (never through a float), in
// whole cents as PUT /api/usage/caps requires (a multiple of 10,000 µ€, at most EUR 1,000,000).

import { ALERT_THRESHOLDS, type CapAction, type CapWindow } from "./caps";
import type { CapView } from "./caps-view";

export const CAP_STEP_MICRO = 10_000;
export const CAP_MAX_MICRO = 1_000_000 * 1_000_000;

/** What each action does when the cap is reached, one line each (README "Usage, cost and spend caps"). */
export const CAP_ACTION_TEXT: Record<CapAction, { label: string; explain: string }> = {
  alert: { label: "Alert only", explain: "Notifies only: nothing is refused or paused." },
  block: {
    label: "Block",
    explain:
      "Baton refuses create, fork, resume, keep-alive and template builds with 402; running sandboxes keep running.",
  },
  pause: {
    label: "Pause",
    explain: "Baton pauses the running sandboxes, clears their auto-resume, then blocks as above.",
  },
};

export const CAP_WINDOW_TEXT: Record<CapWindow, string> = { month: "Month (UTC)", day: "Day (UTC)" };

/** "12.5" or "12,50" → 12_500_000; an explanation when it is not an amount in whole cents in range. */
export function parseCapAmount(text: string): { ok: true; micro: number } | { ok: false; problem: string } {
  const m = /^\s*€?\s*(\d{1,7})(?:[.,](\d{1,2}))?\s*$/.exec(text);
  const problem = "An amount in EUR, 0 or more, in whole cents (12.50), at most 1000000.";
  if (!m) return { ok: false, problem };
  const micro = Number(m[1]) * 1_000_000 + Number((m[2] ?? "").padEnd(2, "0")) * CAP_STEP_MICRO;
  if (micro > CAP_MAX_MICRO) return { ok: false, problem };
  return { ok: true, micro };
}

/** 12_500_000 → "12.50": the form's text for a cap's amount. */
export function capAmountText(micro: number): string {
  const cents = Math.round(micro / CAP_STEP_MICRO);
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`;
}

export type CapStatus =
  | { kind: "unread"; label: string }
  | { kind: "under"; label: string }
  | { kind: "alerted"; threshold: number; label: string }
  | { kind: "reached"; label: string };

/** Where the cap stands, in words that do not lean on colour: unread, under, alerted at 50/80 %, reached. */
export function capStatus(cap: Pick<CapView, "percent" | "reached" | "spent_micro">): CapStatus {
  if (cap.spent_micro === null || cap.percent === null) return { kind: "unread", label: "Not read yet" };
  if (cap.reached) return { kind: "reached", label: "Reached" };
  const crossed = ALERT_THRESHOLDS.filter((t) => t < 100 && cap.percent! >= t).pop();
  if (crossed) return { kind: "alerted", threshold: crossed, label: `Alerted at ${crossed} %` };
  return { kind: "under", label: "Under" };
}

/** Who the cap is for: "The team", or the member's name (or e-mail address). */
export function capSubject(cap: Pick<CapView, "user_id" | "user">): string {
  if (cap.user_id === null) return "The team";
  return cap.user?.name?.trim() || cap.user?.email || "Former member";
}

/** The bar's width in percent, 0 to 100 (a reached cap fills it; past 100 % it stays full). */
export function barWidth(percent: number | null): number {
  if (percent === null || Number.isNaN(percent)) return 0;
  return Math.max(0, Math.min(100, percent));
}

/** The caps in the order the table lists them: the team's first, then members by name; month before day. */
export function sortCaps<T extends Pick<CapView, "user_id" | "user" | "window">>(caps: readonly T[]): T[] {
  return [...caps].sort(
    (a, b) =>
      Number(a.user_id !== null) - Number(b.user_id !== null) ||
      capSubject(a).localeCompare(capSubject(b)) ||
      a.window.localeCompare(b.window) * -1,
  );
}

export interface CapDraft {
  /** "" for the team. */
  subject: string;
  window: CapWindow;
  amount: string;
  action: CapAction;
}

export function capDraft(cap?: Pick<CapView, "user_id" | "window" | "limit_micro" | "action">): CapDraft {
  return cap
    ? { subject: cap.user_id ?? "", window: cap.window, amount: capAmountText(cap.limit_micro), action: cap.action }
    : { subject: "", window: "month", amount: "", action: "alert" };
}

/** The PUT body from the form, or the amount's problem. */
export function readCapDraft(
  d: CapDraft,
):
  | { ok: true; body: { user_id: string | null; window: CapWindow; limit_micro: number; action: CapAction } }
  | { ok: false; problem: string } {
  const amount = parseCapAmount(d.amount);
  if (!amount.ok) return amount;
  return {
    ok: true,
    body: {
      user_id: d.subject === "" ? null : d.subject,
      window: d.window,
      limit_micro: amount.micro,
      action: d.action,
    },
  };
}
