import "server-only";
import { ALERT_THRESHOLDS, capPercent, windowKey, type SpendCap } from "../../usage/caps";
import type { ActingTeam } from "../acting-team";
import type { Db } from "../db/index";
import { capStates, capsFor } from "./caps-store";

// What the console shell says about the caller's spend caps on every page: the cap that applies to
// them (the team's or their own) that is closest to its limit, once it is past the first alert
// threshold (50 %), from the caps job's last figure. Nothing below that: the header stays quiet.

export interface CapMeter {
  cap: Pick<SpendCap, "id" | "userId" | "window" | "limitMicro" | "action">;
  /** The window the figure is for (`YYYY-MM` or `YYYY-MM-DD`): a dismissed warning is for it only. */
  windowKey: string;
  spentMicro: number;
  percent: number;
  reached: boolean;
}

export async function capMeterFor(db: Db, team: ActingTeam | null, now = Date.now()): Promise<CapMeter | null> {
  if (!team) return null;
  const caps = await capsFor(db, team.team.id, team.userId);
  if (caps.length === 0) return null;
  const states = await capStates(
    db,
    caps.map((c) => c.id),
  );
  let worst: CapMeter | null = null;
  for (const cap of caps) {
    const s = states.get(cap.id);
    if (!s || s.windowKey !== windowKey(cap.window, now)) continue;
    const percent = capPercent(s.spentMicro, cap.limitMicro);
    if (percent < ALERT_THRESHOLDS[0]) continue;
    if (!worst || percent > worst.percent)
      worst = {
        cap,
        windowKey: s.windowKey,
        spentMicro: s.spentMicro,
        percent,
        reached: s.spentMicro >= cap.limitMicro,
      };
  }
  return worst;
}
