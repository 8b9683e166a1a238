import "server-only";
import type { OrkestrClient } from "../../orkestr/core";
import { CREATOR_TEAM_KEY, CREATOR_USER_KEY } from "../../sandbox-creator";
import { enforceTokenCaps } from "../api-tokens/caps-job";
import type { Db } from "../db/index";
import type { TeamConnection } from "./reader";
import { notifyCapAlert } from "./cap-alerts";
import { enforceTeamCaps, type CapDecision, type PauseOutcome } from "./caps-job";
import { windowSpend } from "./spend";

// The caps job as the usage reader runs it, right after it booked a team's readings (same lease,
// same interval): spending from Baton's usage record (windowSpend), alerts by the team's channels,
// and pauses through a connection of a member whose role may pause (TeamConnection.pauser; when
// there is none, the cap's pause fails, audited with why). A pause first clears auto_resume, or a
// preview request would wake the sandbox and spending would resume.

/** Pauses the team's running sandboxes (only `userId`'s when set), clearing auto_resume first. */
export async function pauseRunning(
  client: OrkestrClient,
  teamId: string,
  userId: string | null,
): Promise<PauseOutcome> {
  const outcome: PauseOutcome = { paused: [], failed: [] };
  for await (const s of client.sandboxes.listAll({ status: "running", limit: 100 })) {
    const team = s.metadata?.[CREATOR_TEAM_KEY];
    if (typeof team === "string" && team && team !== teamId) continue;
    if (userId !== null && s.metadata?.[CREATOR_USER_KEY] !== userId) continue;
    try {
      if (s.auto_resume) await client.sandboxes.update(s.id, { auto_resume: false });
      await client.sandboxes.pause(s.id);
      outcome.paused.push(s.id);
    } catch (err) {
      outcome.failed.push({ id: s.id, detail: err instanceof Error ? err.message : String(err) });
    }
  }
  return outcome;
}

/** Evaluates and enforces the team's caps; never throws (the reading stands either way). */
export async function runTeamCaps(
  db: Db,
  teamId: string,
  connection: Pick<TeamConnection, "pauser" | "pauserUserId" | "noPauser">,
  now = Date.now(),
): Promise<CapDecision[]> {
  try {
    // API tokens' own monthly caps too (lib/server/api-tokens/caps-job.ts): 50/80/100 % alerts, pause once a month.
    await enforceTokenCaps(db, teamId, connection.pauser, now).catch((err: unknown) =>
      console.error(`[baton] API token caps of team ${teamId}:`, err),
    );
    return await enforceTeamCaps(
      db,
      teamId,
      {
        spend: (id, window) => windowSpend(db, id, window),
        pause: async (id, userId) =>
          connection.pauser
            ? { ...(await pauseRunning(connection.pauser, id, userId)), via: connection.pauserUserId }
            : {
                paused: [],
                failed: [{ id: "*", detail: connection.noPauser ?? "No connection that may pause." }],
                cause: "no_pause_connection" as const,
              },
        notify: (alert) => notifyCapAlert(db, alert),
      },
      now,
    );
  } catch (err) {
    console.error(`[baton] spend caps of team ${teamId}:`, err);
    return [];
  }
}
