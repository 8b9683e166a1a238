import "server-only";
import { capReached, capReachedDetail, windowBounds, windowKey, type CapWindow, type SpendCap } from "../../usage/caps";
import type { ActingTeam } from "../acting-team";
import { assertUnderTokenCap, assertUnderTokenConcurrency } from "../api-tokens/limits";
import type { Db } from "../db/index";
import { AppError } from "../errors";
import { actingCan } from "../rbac";
import { withTeamCapLock } from "./cap-lock";
import { capStates, capsFor } from "./caps-store";
import { windowSpend, type WindowSpend } from "./spend";

// The request-time side of "block" (and of "pause", which blocks too): Baton's proxy refuses what
// would start or prolong spending (create, fork, resume, keep-alive, template builds) with 402
// spend_cap_reached while a cap that applies to the caller is reached. It reads the figure the caps
// job last computed (no usage read per request), compared with the cap as it is now: a cap lowered
// below what is already spent acts at once, before the job's next run. A cap the job has not
// computed in this window (just set, or a new day or month has begun) is compared with the usage
// record's own figure for the window (the query the job runs), so a new cap set below what is
// already spent acts at once too (issue 22), not at the job's next run.

/** The first blocking cap of the caller's that is reached, with what was spent; null when none. */
export async function reachedCap(
  db: Db,
  teamId: string,
  userId: string,
  now = Date.now(),
): Promise<{ cap: SpendCap; spentMicro: number } | null> {
  const caps = (await capsFor(db, teamId, userId)).filter((c) => c.action !== "alert");
  if (caps.length === 0) return null;
  const states = await capStates(
    db,
    caps.map((c) => c.id),
  );
  const recorded = new Map<CapWindow, WindowSpend>();
  for (const cap of caps) {
    const state = states.get(cap.id);
    let spentMicro: number;
    if (state && state.windowKey === windowKey(cap.window, now)) spentMicro = state.spentMicro;
    else {
      let spend = recorded.get(cap.window);
      if (!spend) recorded.set(cap.window, (spend = await windowSpend(db, teamId, windowBounds(cap.window, now))));
      spentMicro = cap.userId === null ? spend.team : (spend.byUser.get(cap.userId) ?? 0);
    }
    if (capReached(cap, spentMicro)) return { cap, spentMicro };
  }
  return null;
}

/** Who may raise a cap, in words: the owners, and the admins when the owners allow it. */
export function capRaisers(team: Pick<ActingTeam, "team">): string {
  return actingCan({ role: "admin", team: team.team }, "billing.manage")
    ? "the team's owners and admins"
    : "the team's owners";
}

/**
 * 402 spend_cap_reached when a cap that applies to this request's user is reached, or the request's
 * API token's own monthly cap (lib/server/api-tokens/limits.ts).
 */
export async function assertUnderCaps(db: Db, team: ActingTeam, refused: string, now = Date.now()): Promise<void> {
  const hit = await reachedCap(db, team.team.id, team.userId, now);
  if (!hit) return assertUnderTokenCap(db, team, refused, now);
  throw new AppError(
    "spend_cap_reached",
    capReachedDetail({ ...hit, teamName: team.team.name, raisers: capRaisers(team), refused }),
  );
}

/**
 * Runs `start` (a create, a fork) after the check, under the team's cap lock (across Baton instances
 * on PostgreSQL: cap-lock.ts): parallel creates are checked one at a time, each after the previous
 * one's upstream create returned, and not while the job evaluates the team's caps. With an API
 * token, its limit of concurrent sandboxes too (429 concurrency_limit).
 */
export async function underCaps<T>(db: Db, team: ActingTeam, refused: string, start: () => Promise<T>): Promise<T> {
  return withTeamCapLock(db, team.team.id, async (locked) => {
    await assertUnderCaps(locked, team, refused);
    await assertUnderTokenConcurrency(team, refused);
    return start();
  });
}
