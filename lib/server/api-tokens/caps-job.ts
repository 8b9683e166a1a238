import "server-only";
import type { OrkestrClient } from "../../orkestr/core";
import { CREATOR_TEAM_KEY, CREATOR_TOKEN_KEY } from "../../sandbox-creator";
import { ALERT_THRESHOLDS, formatMicro, windowKey, type SpendCap } from "../../usage/caps";
import { recordAudit } from "../db/audit";
import type { Db } from "../db/index";
import { notifyCapAlert } from "../usage/cap-alerts";
import { withTeamCapLock } from "../usage/cap-lock";
import { sendDueAlerts, type CapsJobDeps } from "../usage/caps-job";
import { sentAlerts } from "../usage/caps-store";
import { tokenMonthSpend } from "./limits";

// The caps job's part for API tokens' own monthly caps (lib/server/api-tokens/limits.ts), run by the
// usage reader with the team's caps (lib/server/usage/caps-run.ts), under the team's cap lock as
// they are. The request-time check already refuses what would start or prolong spending with the
// token; here:
// - the alerts at 50, 80 and 100 % of the cap, each once per token and UTC month, exactly as a
//   member's cap sends them (sendDueAlerts: claimed in api_token_cap_alerts, then by the team's
//   channels, email also to the token's owner, and audited `spend_cap.alert` with the token as the
//   subject); and, the first run of the month that finds a token's cap reached:
// - audits `spend_cap.reached` with the token as the subject (its name, owner, cap and spend), and
// - pauses the running sandboxes made with the token (auto_resume cleared first, as the team's pause
//   does), once: a person may resume one afterwards (with their session, or another token) without
//   the job pausing it again every interval.
// Once per token and UTC month, across instances: a conditional write of `cap_alerted_window`.

export interface TokenCapDecision {
  tokenId: string;
  spentMicro: number;
  /** The alert thresholds sent by this run. */
  alerts: number[];
  /** Whether this run acted on the cap being reached (audit and pause, once a month). */
  reached: boolean;
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

/** Alerts on the team's tokens' monthly caps and acts on those reached for the first time this month. */
export async function enforceTokenCaps(
  db: Db,
  teamId: string,
  pauser: OrkestrClient | null,
  now = Date.now(),
  notify: CapsJobDeps["notify"] = (alert) => notifyCapAlert(db, alert),
): Promise<TokenCapDecision[]> {
  const month = windowKey("month", now);
  const tokens = await db
    .selectFrom("api_tokens")
    .select(["id", "name", "user_id", "spend_cap_micro", "cap_alerted_window"])
    .where("team_id", "=", teamId)
    .where("spend_cap_micro", "is not", null)
    .where("revoked_at", "is", null)
    .execute();
  if (tokens.length === 0) return [];
  // Under the team's cap lock, as the team's caps (across instances on PostgreSQL); the claims below
  // are what make each alert and each pause once, the lock keeps the runs from interleaving.
  return withTeamCapLock(db, teamId, async () => {
    const decisions: TokenCapDecision[] = [];
    for (const t of tokens) {
      const sent = await sentAlerts(db, t.id, month, "api_token_cap_alerts");
      // Everything of this month done already: no usage read.
      if (t.cap_alerted_window === month && ALERT_THRESHOLDS.every((th) => sent.has(th))) continue;
      const limitMicro = Number(t.spend_cap_micro);
      const spent = await tokenMonthSpend(db, teamId, t.id, now);
      const subject = {
        subject: "api_token",
        name: t.name,
        owner: t.user_id,
        window: "month",
        window_key: month,
        limit_micro: limitMicro,
        limit: formatMicro(limitMicro),
        spent_micro: spent,
        spent: formatMicro(spent),
      };
      // The token's cap as a cap of its owner that pauses (what it does when reached), for the alert.
      const cap: SpendCap = { id: t.id, teamId, userId: t.user_id, window: "month", limitMicro, action: "pause" };
      const alerts = await sendDueAlerts(db, {
        ledger: "api_token_cap_alerts",
        alert: { teamId, cap, token: { id: t.id, name: t.name }, spentMicro: spent, windowKey: month },
        now,
        notify,
        audit: (threshold, channels) =>
          recordAudit(db, {
            action: "spend_cap.alert",
            teamId,
            userId: null,
            actorEmail: null,
            credential: "spend-caps-job",
            targetType: "api_token",
            targetId: t.id,
            result: "ok",
            data: { ...subject, threshold, channels },
            now,
          }),
      });
      const decision: TokenCapDecision = {
        tokenId: t.id,
        spentMicro: spent,
        alerts,
        reached: false,
        paused: [],
        failed: [],
      };
      if (alerts.length > 0) decisions.push(decision);
      if (t.cap_alerted_window === month || spent < limitMicro) continue;
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
          ...subject,
          blocks: true,
          paused: outcome.paused,
          ...(outcome.failed.length > 0 ? { pause_failed: outcome.failed } : {}),
        },
        now,
      });
      Object.assign(decision, { reached: true, ...outcome });
      if (alerts.length === 0) decisions.push(decision);
    }
    return decisions;
  });
}
