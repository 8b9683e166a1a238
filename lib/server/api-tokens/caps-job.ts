import "server-only";
import type { OrkestrClient } from "../../orkestr/core";
import { CREATOR_TEAM_KEY, CREATOR_TOKEN_KEY } from "../../sandbox-creator";
import { formatMicro, windowKey } from "../../usage/caps";
import { recordAudit } from "../db/audit";
import type { Db } from "../db/index";
import { tokenMonthSpend } from "./limits";

// The caps job's part for API tokens' own monthly caps (lib/server/api-tokens/limits.ts), run by the
// usage reader right after the team's caps (lib/server/usage/caps-run.ts). The request-time check
// already refuses what would start or prolong spending with the token; here, the first run of the
// month that finds a token's cap reached:
// - audits `spend_cap.reached` with the token as the subject (its name, owner, cap and spend), and
// - pauses the running sandboxes made with the token (auto_resume cleared first, as the team's pause
//   does), once: a person may resume one afterwards (with their session, or another token) without
//   the job pausing it again every interval.
// Once per token and UTC month, across instances: a conditional write of `cap_alerted_window`.

export interface TokenCapDecision {
  tokenId: string;
  spentMicro: number;
  paused: string[];
  failed: Array<{ id: string; detail: string }>;
}

/** Pauses the running sandboxes stamped with `tokenId` in `teamId`, clearing auto_resume first. */
async function pauseTokenSandboxes(client: OrkestrClient, teamId: string, tokenId: string) {
  const outcome = { paused: [] as string[], failed: [] as Array<{ id: string; detail: string }> };
  for await (const s of client.sandboxes.listAll({
    status: "running",
    metadata: { [CREATOR_TOKEN_KEY]: tokenId },
    limit: 100,
  })) {
    if (s.metadata?.[CREATOR_TEAM_KEY] !== teamId || s.metadata?.[CREATOR_TOKEN_KEY] !== tokenId) continue;
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

/** Acts on the team's tokens whose monthly cap is reached for the first time this month. */
export async function enforceTokenCaps(
  db: Db,
  teamId: string,
  pauser: OrkestrClient | null,
  now = Date.now(),
): Promise<TokenCapDecision[]> {
  const month = windowKey("month", now);
  const tokens = await db
    .selectFrom("api_tokens")
    .select(["id", "name", "user_id", "spend_cap_micro", "cap_alerted_window"])
    .where("team_id", "=", teamId)
    .where("spend_cap_micro", "is not", null)
    .where("revoked_at", "is", null)
    .execute();
  const decisions: TokenCapDecision[] = [];
  for (const t of tokens) {
    if (t.cap_alerted_window === month) continue;
    const cap = Number(t.spend_cap_micro);
    const spent = await tokenMonthSpend(db, teamId, t.id, now);
    if (spent < cap) continue;
    // One instance, one run: whoever moves the window acts.
    const claimed = await db
      .updateTable("api_tokens")
      .set({ cap_alerted_window: month })
      .where("id", "=", t.id)
      .where((eb) => eb.or([eb("cap_alerted_window", "is", null), eb("cap_alerted_window", "!=", month)]))
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) continue;
    const outcome = pauser
      ? await pauseTokenSandboxes(pauser, teamId, t.id).catch((err: unknown) => ({
          paused: [] as string[],
          failed: [{ id: "*", detail: err instanceof Error ? err.message : String(err) }],
        }))
      : { paused: [], failed: [{ id: "*", detail: "No connection of the team that may pause sandboxes." }] };
    await recordAudit(db, {
      action: "spend_cap.reached",
      teamId,
      userId: null,
      actorEmail: null,
      credential: "spend-caps-job",
      targetType: "api_token",
      targetId: t.id,
      result: outcome.failed.length > 0 ? "pause_failed" : "ok",
      data: {
        subject: "api_token",
        name: t.name,
        owner: t.user_id,
        window: "month",
        window_key: month,
        limit_micro: cap,
        limit: formatMicro(cap),
        spent_micro: spent,
        spent: formatMicro(spent),
        blocks: true,
        paused: outcome.paused,
        ...(outcome.failed.length > 0 ? { pause_failed: outcome.failed } : {}),
      },
    });
    decisions.push({ tokenId: t.id, spentMicro: spent, ...outcome });
  }
  return decisions;
}
