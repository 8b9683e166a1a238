import "server-only";
import {
  alertsDue,
  capPercent,
  capReached,
  formatMicro,
  windowBounds,
  windowKey,
  type CapWindow,
  type SpendCap,
} from "../../usage/caps";
import type { AuditAction } from "../../audit-actions";
import { recordAudit } from "../db/audit";
import type { Db } from "../db/index";
import { withTeamCapLock } from "./cap-lock";
import {
  capStates,
  claimAlert,
  listCaps,
  recordAlertChannels,
  sentAlerts,
  writeCapState,
  type AlertLedger,
  type CapState,
} from "./caps-store";

// The spend caps' job, for one team per call: after the usage reader has booked the team's newest
// readings, each cap's spending in its current UTC window is computed from Baton's usage record;
// thresholds newly crossed send their alert (once per window, whichever instance claims it), and a
// reached cap acts: "block" from now on (the request-time check reads the state written here),
// "pause" also pauses the running sandboxes in its scope, on every run while it stays reached (one
// resumed around Baton is paused again). Every decision is audited with the figures behind it.
// Baton never terminates a sandbox here.

/** What the team's sandboxes cost in a window, in µ€: the team's total and each creator's. */
export interface WindowSpend {
  team: number;
  /** By creator user id (sandboxes made outside Baton count for the team only). */
  byUser: ReadonlyMap<string, number>;
}

export interface PauseOutcome {
  paused: string[];
  /** Pauses the upstream refused (e.g. its paused-sandbox limit), with why. */
  failed: { id: string; detail: string }[];
  /** Why the pauses failed, as the audit's result: the upstream refused (default), or Baton had no connection that may pause. */
  cause?: "upstream_refused" | "no_pause_connection";
  /** The user whose connection paused (audited), when known. */
  via?: string | null;
}

export interface CapAlert {
  teamId: string;
  /** For an API token's own cap: its id (also `cap.id`), `userId` its owner, a monthly window, action "pause". */
  cap: SpendCap;
  /** Set when the cap is an API token's own (lib/server/api-tokens/caps-job.ts), not a team's or member's. */
  token?: { id: string; name: string };
  kind: "threshold" | "pause_failed";
  threshold: number | null;
  spentMicro: number;
  windowKey: string;
  failed?: PauseOutcome["failed"];
  cause?: PauseOutcome["cause"];
}

export interface CapsJobDeps {
  /** Spending in [start, end) from Baton's usage record. */
  spend(teamId: string, window: { start: number; end: number }): Promise<WindowSpend>;
  /** Pauses the team's running sandboxes (one member's when userId is set) and clears their auto_resume. */
  pause(teamId: string, userId: string | null): Promise<PauseOutcome>;
  /** Sends an alert by the team's channels (email, webhook); how each went, by channel. */
  notify(alert: CapAlert): Promise<Record<string, string>>;
}

export interface CapDecision {
  capId: string;
  windowKey: string;
  spentMicro: number;
  percent: number;
  alerts: number[];
  reached: boolean;
  paused: string[];
  pauseFailed: PauseOutcome["failed"];
}

async function audit(
  db: Db,
  teamId: string,
  action: AuditAction,
  cap: SpendCap,
  data: Record<string, unknown>,
  now: number,
  result = "ok",
): Promise<void> {
  await recordAudit(db, {
    action,
    teamId,
    userId: null,
    actorEmail: null,
    credential: "spend-caps-job",
    targetType: "spend_cap",
    targetId: cap.id,
    result,
    data: {
      subject: cap.userId ?? "team",
      window: cap.window,
      limit_micro: cap.limitMicro,
      limit: formatMicro(cap.limitMicro),
      action: cap.action,
      ...data,
    },
    now,
  });
}

/**
 * Sends the alerts (50/80/100 %) that `spentMicro` crossed and that were not sent yet in the window:
 * each is claimed first in the ledger (one row per cap, window and threshold, so once whichever
 * instance gets there), then sent by `notify`, how each channel went recorded with it, and audited.
 * The team's and members' caps and API tokens' own caps (each in its ledger) go through here.
 */
export async function sendDueAlerts(
  db: Db,
  input: {
    ledger: AlertLedger;
    alert: Pick<CapAlert, "teamId" | "cap" | "token" | "spentMicro" | "windowKey">;
    now: number;
    notify: CapsJobDeps["notify"];
    audit: (threshold: number, channels: Record<string, string>) => Promise<unknown>;
  },
): Promise<number[]> {
  const { ledger, alert, now } = input;
  const { cap, spentMicro, windowKey: key } = alert;
  const sent: number[] = [];
  for (const threshold of alertsDue(cap, spentMicro, await sentAlerts(db, cap.id, key, ledger))) {
    if (!(await claimAlert(db, { capId: cap.id, windowKey: key, threshold, spentMicro, now }, ledger))) continue;
    sent.push(threshold);
    const channels = await input
      .notify({ ...alert, kind: "threshold", threshold })
      .catch((err: unknown) => ({ error: err instanceof Error ? err.message : String(err) }));
    await recordAlertChannels(db, { capId: cap.id, windowKey: key, threshold }, channels, ledger);
    await input.audit(threshold, channels);
  }
  return sent;
}

/** Evaluates and enforces every cap of one team at `now`. */
export async function enforceTeamCaps(
  db: Db,
  teamId: string,
  deps: CapsJobDeps,
  now = Date.now(),
): Promise<CapDecision[]> {
  const caps = await listCaps(db, teamId);
  if (caps.length === 0) return [];
  // Under the team's cap lock (across instances on PostgreSQL); the writes below go through `db`
  // and commit as they are made, not with the lock's transaction.
  return withTeamCapLock(db, teamId, async () => {
    const spendBy = new Map<CapWindow, WindowSpend>();
    for (const w of new Set(caps.map((c) => c.window))) spendBy.set(w, await deps.spend(teamId, windowBounds(w, now)));
    const states = await capStates(
      db,
      caps.map((c) => c.id),
    );
    const decisions: CapDecision[] = [];
    for (const cap of caps) {
      const key = windowKey(cap.window, now);
      const spend = spendBy.get(cap.window)!;
      const spentMicro = cap.userId === null ? spend.team : (spend.byUser.get(cap.userId) ?? 0);
      const previous = states.get(cap.id);
      const sameWindow = previous?.windowKey === key;
      const figures = { spent_micro: spentMicro, spent: formatMicro(spentMicro), window_key: key };

      const alerts = await sendDueAlerts(db, {
        ledger: "spend_cap_alerts",
        alert: { teamId, cap, spentMicro, windowKey: key },
        now,
        notify: deps.notify,
        audit: (threshold, channels) =>
          audit(db, teamId, "spend_cap.alert", cap, { ...figures, threshold, channels }, now),
      });

      const reached = capReached(cap, spentMicro);
      const state: CapState = {
        capId: cap.id,
        windowKey: key,
        spentMicro,
        evaluatedAt: now,
        reachedAt: reached ? ((sameWindow ? previous?.reachedAt : null) ?? now) : null,
        actedAt: sameWindow ? (previous?.actedAt ?? null) : null,
        lastResult: sameWindow ? (previous?.lastResult ?? null) : null,
      };
      let paused: string[] = [];
      let pauseFailed: PauseOutcome["failed"] = [];
      if (reached && cap.action !== "alert") {
        if (state.reachedAt === now)
          await audit(db, teamId, "spend_cap.reached", cap, { ...figures, blocks: true }, now);
        if (cap.action === "pause") {
          const outcome: PauseOutcome = await deps.pause(teamId, cap.userId).catch((err: unknown) => ({
            paused: [],
            failed: [{ id: "*", detail: err instanceof Error ? err.message : String(err) }],
          }));
          paused = outcome.paused;
          pauseFailed = outcome.failed;
          if (paused.length > 0) {
            state.actedAt = now;
            await audit(
              db,
              teamId,
              "spend_cap.pause",
              cap,
              { ...figures, paused, ...(outcome.via ? { via_user: outcome.via } : {}) },
              now,
            );
          }
          // The same failure as the last run's in this window (the same sandboxes, the same reasons) was
          // said then: it is not audited and sent again every interval, or one email a minute buries it.
          const before = sameWindow ? (previous?.lastResult as { failed?: unknown } | null | undefined) : null;
          const repeated = JSON.stringify(before?.failed ?? []) === JSON.stringify(pauseFailed);
          if (pauseFailed.length > 0 && !repeated) {
            await audit(
              db,
              teamId,
              "spend_cap.pause_failed",
              cap,
              { ...figures, failed: pauseFailed },
              now,
              outcome.cause ?? "upstream_refused",
            );
            await deps
              .notify({
                teamId,
                cap,
                kind: "pause_failed",
                threshold: null,
                spentMicro,
                windowKey: key,
                failed: pauseFailed,
                ...(outcome.cause ? { cause: outcome.cause } : {}),
              })
              .catch(() => null);
          }
          state.lastResult = { paused, failed: pauseFailed, at: now };
        }
      }
      await writeCapState(db, state);
      decisions.push({
        capId: cap.id,
        windowKey: key,
        spentMicro,
        percent: capPercent(spentMicro, cap.limitMicro),
        alerts,
        reached,
        paused,
        pauseFailed,
      });
    }
    return decisions;
  });
}
