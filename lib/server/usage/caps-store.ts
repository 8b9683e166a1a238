import "server-only";
import { z } from "zod";
import { CAP_ACTIONS, CAP_WINDOWS, memberCapProblem, type SpendCap } from "../../usage/caps";
import type { Db } from "../db/index";
import { inTransaction, parseRow } from "../db/util";
import { AppError } from "../errors";
import { newId } from "../ids";

// Spend caps as stored (migration 0011): the caps, what the job last computed for each, and the
// alerts already sent. The rules themselves are lib/usage/caps.ts.

/** The subject of a team's own cap (a member's cap has their user id). */
export const TEAM_SUBJECT = "team";

const CapRow = z
  .object({
    id: z.string(),
    team_id: z.string(),
    user_id: z.string().nullable(),
    window: z.enum(CAP_WINDOWS),
    limit_micro: z.coerce.number().int().nonnegative(),
    action: z.enum(CAP_ACTIONS),
  })
  .transform((r): SpendCap => ({
    id: r.id,
    teamId: r.team_id,
    userId: r.user_id,
    window: r.window,
    limitMicro: r.limit_micro,
    action: r.action,
  }));

const CAP_COLUMNS = ["id", "team_id", "user_id", "window", "limit_micro", "action"] as const;

/** The team's caps: its own first, then its members', each month before day. */
export async function listCaps(db: Db, teamId: string): Promise<SpendCap[]> {
  const rows = await db.selectFrom("spend_caps").select(CAP_COLUMNS).where("team_id", "=", teamId).execute();
  return rows
    .map((r) => parseRow("spend_caps", CapRow, r))
    .sort(
      (a, b) =>
        Number(a.userId !== null) - Number(b.userId !== null) ||
        (a.userId ?? "").localeCompare(b.userId ?? "") ||
        a.window.localeCompare(b.window) * -1,
    );
}

/** The caps that apply to a member's request: the team's and their own. */
export async function capsFor(db: Db, teamId: string, userId: string): Promise<SpendCap[]> {
  const rows = await db
    .selectFrom("spend_caps")
    .select(CAP_COLUMNS)
    .where("team_id", "=", teamId)
    .where((eb) => eb.or([eb("subject", "=", TEAM_SUBJECT), eb("subject", "=", userId)]))
    .execute();
  return rows.map((r) => parseRow("spend_caps", CapRow, r));
}

export interface CapInput {
  teamId: string;
  /** null: the team's cap. */
  userId: string | null;
  window: SpendCap["window"];
  limitMicro: number;
  action: SpendCap["action"];
  by: string;
  now?: number;
}

/**
 * Sets the cap of a subject and window (creates or replaces it), in one transaction that first
 * checks the rule between the team's and its members' caps: a member's may not be higher than the
 * team's, and a team's may not go below a member's (the error names who). 422 cap_conflict.
 */
export async function setCap(db: Db, input: CapInput): Promise<{ before: SpendCap | null; after: SpendCap }> {
  const now = input.now ?? Date.now();
  const subject = input.userId ?? TEAM_SUBJECT;
  return inTransaction(db, async (trx) => {
    const all = await listCaps(trx, input.teamId);
    const before = all.find((c) => c.userId === input.userId && c.window === input.window) ?? null;
    if (input.userId !== null) {
      const problem = memberCapProblem(
        input,
        all.filter((c) => c.userId === null),
      );
      if (problem) throw new AppError("cap_conflict", problem);
    } else {
      const higher = all.filter(
        (c) => c.userId !== null && c.window === input.window && c.limitMicro > input.limitMicro,
      );
      if (higher.length > 0)
        throw new AppError(
          "cap_conflict",
          `${higher.length === 1 ? "A member's cap is" : `${higher.length} members' caps are`} higher than this; ` +
            "lower or remove them first (a member's cap cannot be higher than the team's).",
        );
    }
    if (before) {
      await trx
        .updateTable("spend_caps")
        .set({ limit_micro: input.limitMicro, action: input.action, updated_by: input.by, updated_at: now })
        .where("id", "=", before.id)
        .execute();
    } else {
      await trx
        .insertInto("spend_caps")
        .values({
          id: newId("cap"),
          team_id: input.teamId,
          subject,
          user_id: input.userId,
          window: input.window,
          limit_micro: input.limitMicro,
          action: input.action,
          created_by: input.by,
          created_at: now,
          updated_by: input.by,
          updated_at: now,
        })
        .execute();
    }
    const after = (await listCaps(trx, input.teamId)).find(
      (c) => c.userId === input.userId && c.window === input.window,
    )!;
    return { before, after };
  });
}

/** Removes a cap of the team; null when it has no such cap (404 for the caller). */
export async function deleteCap(db: Db, teamId: string, capId: string): Promise<SpendCap | null> {
  const cap = (await listCaps(db, teamId)).find((c) => c.id === capId) ?? null;
  if (!cap) return null;
  await db.deleteFrom("spend_caps").where("id", "=", capId).where("team_id", "=", teamId).execute();
  return cap;
}

export interface CapState {
  capId: string;
  windowKey: string;
  spentMicro: number;
  evaluatedAt: number;
  reachedAt: number | null;
  actedAt: number | null;
  lastResult: unknown;
}

const StateRow = z
  .object({
    cap_id: z.string(),
    window_key: z.string(),
    spent_micro: z.coerce.number(),
    evaluated_at: z.coerce.number(),
    reached_at: z.coerce.number().nullable(),
    acted_at: z.coerce.number().nullable(),
    last_result: z.string().nullable(),
  })
  .transform((r): CapState => ({
    capId: r.cap_id,
    windowKey: r.window_key,
    spentMicro: r.spent_micro,
    evaluatedAt: r.evaluated_at,
    reachedAt: r.reached_at,
    actedAt: r.acted_at,
    lastResult: r.last_result === null ? null : (JSON.parse(r.last_result) as unknown),
  }));

/** What the job last computed for each of these caps (by cap id). */
export async function capStates(db: Db, capIds: readonly string[]): Promise<Map<string, CapState>> {
  if (capIds.length === 0) return new Map();
  const rows = await db.selectFrom("spend_cap_state").selectAll().where("cap_id", "in", capIds).execute();
  return new Map(rows.map((r) => parseRow("spend_cap_state", StateRow, r)).map((s) => [s.capId, s]));
}

export async function writeCapState(db: Db, state: CapState): Promise<void> {
  const row = {
    window_key: state.windowKey,
    spent_micro: Math.round(state.spentMicro),
    evaluated_at: state.evaluatedAt,
    reached_at: state.reachedAt,
    acted_at: state.actedAt,
    last_result: state.lastResult === null || state.lastResult === undefined ? null : JSON.stringify(state.lastResult),
  };
  await db
    .insertInto("spend_cap_state")
    .values({ cap_id: state.capId, ...row })
    .onConflict((oc) => oc.column("cap_id").doUpdateSet(row))
    .execute();
}

/**
 * Where the alerts already sent are claimed: a team's or member's cap (spend_cap_alerts, by cap id),
 * or an API token's own cap (api_token_cap_alerts, by token id; lib/server/api-tokens/caps-job.ts).
 * Both tables have the same shape and the same claim.
 */
export type AlertLedger = "spend_cap_alerts" | "api_token_cap_alerts";

/** The thresholds already alerted for a cap in a window. */
export async function sentAlerts(
  db: Db,
  capId: string,
  windowKey: string,
  ledger: AlertLedger = "spend_cap_alerts",
): Promise<Set<number>> {
  const rows = await db
    .selectFrom(ledger)
    .select("threshold")
    .where("cap_id", "=", capId)
    .where("window_key", "=", windowKey)
    .execute();
  return new Set(rows.map((r) => Number(r.threshold)));
}

/**
 * Claims an alert: true for the one caller (of any instance) whose row went in, false when the
 * alert of this cap, window and threshold was claimed already.
 */
export async function claimAlert(
  db: Db,
  input: { capId: string; windowKey: string; threshold: number; spentMicro: number; now: number },
  ledger: AlertLedger = "spend_cap_alerts",
): Promise<boolean> {
  const res = await db
    .insertInto(ledger)
    .values({
      cap_id: input.capId,
      window_key: input.windowKey,
      threshold: input.threshold,
      spent_micro: Math.round(input.spentMicro),
      sent_at: input.now,
      channels: null,
    })
    .onConflict((oc) => oc.columns(["cap_id", "window_key", "threshold"]).doNothing())
    .returning("cap_id")
    .executeTakeFirst();
  return res !== undefined;
}

/** Records how an alert's channels went (after sending). */
export async function recordAlertChannels(
  db: Db,
  key: { capId: string; windowKey: string; threshold: number },
  channels: Record<string, string>,
  ledger: AlertLedger = "spend_cap_alerts",
): Promise<void> {
  await db
    .updateTable(ledger)
    .set({ channels: JSON.stringify(channels) })
    .where("cap_id", "=", key.capId)
    .where("window_key", "=", key.windowKey)
    .where("threshold", "=", key.threshold)
    .execute();
}
