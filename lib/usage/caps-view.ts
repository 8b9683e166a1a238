// What GET /api/usage/caps answers (lib/server/usage/caps-api.ts builds it; the /usage page reads
// it). Client-safe: types only.

import type { SpendCap } from "./caps";

export interface CapView {
  id: string;
  /** null: the team's cap. */
  user_id: string | null;
  user: { name: string | null; email: string } | null;
  window: SpendCap["window"];
  limit_micro: number;
  action: SpendCap["action"];
  /** From the job's last run in the current window; null before its first. */
  spent_micro: number | null;
  percent: number | null;
  reached: boolean;
  evaluated_at: string | null;
  window_key: string;
  /** When the window ends and the cap starts again from zero (ISO, UTC). */
  resets_at: string;
  /** What the cap's running sandboxes spend per hour now, from their last two readings. */
  run_rate_micro_per_hour: number;
  /** What more could be spent before the job's next run sees it: the run-rate until next_run_at. */
  possible_overshoot_micro: number;
  /** The last pause the cap made, and what the upstream refused. */
  last_result: unknown;
}

export interface CapsView {
  caps: CapView[];
  /** Everyone's caps (billing.manage, or admins and owners), or only the team's and the caller's own. */
  scope: "team" | "self";
  can_manage: boolean;
  /** Who may raise a cap, in words. */
  raisers: string;
  /** When the job next reads usage and applies the caps: a change takes effect then (ISO). */
  next_run_at: string;
}
