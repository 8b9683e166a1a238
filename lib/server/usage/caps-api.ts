import "server-only";
import { z } from "zod";
import {
  CAP_ACTIONS,
  CAP_WINDOWS,
  capPercent,
  capReached,
  possibleOvershootMicro,
  windowBounds,
  windowKey,
} from "../../usage/caps";
import type { ActingTeam } from "../acting-team";
import type { Db } from "../db/index";
import { listMembers } from "../members";
import { actingCan } from "../rbac";
import { capRaisers } from "./cap-check";
import { capStates, listCaps } from "./caps-store";
import { getUsageRates } from "./rates";
import { nextReadingAt } from "./reader";
import { runningRates } from "./report";
import type { CapsView } from "../../usage/caps-view";

// What GET /api/usage/caps answers, and PUT's body. Caps are set in whole cents (limit_micro is a
// multiple of 10,000 µ€), up to EUR 1,000,000.

export const MAX_CAP_MICRO = 1_000_000 * 1_000_000;

export const CapBody = z.object({
  /** null or absent: the team's cap; else a member's user id. */
  user_id: z.string().min(1).max(100).nullable().default(null),
  window: z.enum(CAP_WINDOWS, { error: "must be month or day" }),
  limit_micro: z
    .number({ error: "must be a whole number of micro-euros" })
    .int({ error: "must be a whole number of micro-euros" })
    .min(0, { error: "must be 0 or more" })
    .max(MAX_CAP_MICRO, { error: "must be at most EUR 1,000,000" })
    .refine((n) => n % 10_000 === 0, { error: "must be whole cents (a multiple of 10,000 micro-euros)" }),
  action: z.enum(CAP_ACTIONS, { error: "must be alert, block or pause" }),
});

/** Admins and owners see every cap and everyone's distance to it; others the team's and their own. */
export function seesAllCaps(team: ActingTeam): boolean {
  return actingCan(team, "billing.manage") || actingCan(team, "members.manage");
}

export async function capsView(db: Db, team: ActingTeam, now = Date.now()): Promise<CapsView> {
  const all = seesAllCaps(team);
  const caps = (await listCaps(db, team.team.id)).filter((c) => all || c.userId === null || c.userId === team.userId);
  const states = await capStates(
    db,
    caps.map((c) => c.id),
  );
  const members = new Map((await listMembers(db, team.team.id, now)).map((m) => [m.userId, m]));
  const nextRun = await nextRunAt(db, team.team.id, now);
  const running = caps.length ? await runningOf(db, team.team.id) : [];
  const rateOf = (userId: string | null) =>
    running.filter((r) => userId === null || r.user_id === userId).reduce((n, r) => n + r.micro_per_hour, 0);
  return {
    scope: all ? "team" : "self",
    can_manage: actingCan(team, "billing.manage"),
    raisers: capRaisers(team),
    next_run_at: new Date(nextRun).toISOString(),
    caps: caps.map((c) => {
      const key = windowKey(c.window, now);
      const s = states.get(c.id);
      const current = s && s.windowKey === key ? s : null;
      const m = c.userId ? members.get(c.userId) : undefined;
      const rate = rateOf(c.userId);
      return {
        id: c.id,
        user_id: c.userId,
        user: c.userId ? { name: m?.name ?? null, email: m?.email ?? "former member" } : null,
        window: c.window,
        limit_micro: c.limitMicro,
        action: c.action,
        spent_micro: current?.spentMicro ?? null,
        percent: current ? capPercent(current.spentMicro, c.limitMicro) : null,
        reached: current ? capReached(c, current.spentMicro) : false,
        evaluated_at: current ? new Date(current.evaluatedAt).toISOString() : null,
        window_key: key,
        resets_at: new Date(windowBounds(c.window, now).end).toISOString(),
        run_rate_micro_per_hour: rate,
        possible_overshoot_micro: possibleOvershootMicro(rate, nextRun - now),
        last_result: current?.lastResult ?? null,
      };
    }),
  };
}

/** When the usage reader (which runs the caps) reads this team next. */
async function nextRunAt(db: Db, teamId: string, now: number): Promise<number> {
  const settings = await db
    .selectFrom("team_usage_settings")
    .select("last_reading_at")
    .where("team_id", "=", teamId)
    .executeTakeFirst();
  const last = settings?.last_reading_at != null ? Number(settings.last_reading_at) : null;
  return nextReadingAt(db, last, now);
}

/** The team's running sandboxes with what each spends per hour (the caps' run-rates). */
async function runningOf(db: Db, teamId: string) {
  const meters = await db
    .selectFrom("usage_meters")
    .selectAll()
    .where("team_id", "=", teamId)
    .where("final_at", "is", null)
    .where("status", "=", "running")
    .execute();
  return runningRates(meters, await getUsageRates(db, teamId));
}
