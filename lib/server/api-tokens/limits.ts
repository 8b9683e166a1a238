import "server-only";
import { formatMicro, windowBounds } from "../../usage/caps";
import { costMicro } from "../../usage/report";
import { CREATOR_TOKEN_KEY } from "../../sandbox-creator";
import type { ActingApiToken, ActingTeam } from "../acting-team";
import type { Db } from "../db/index";
import { AppError } from "../errors";
import { withUpstream } from "../upstream";
import { getUsageRates } from "../usage/rates";

// A personal API token's own limits (issue 23): a monthly spend cap and a maximum of concurrent
// sandboxes, set when the token is made and never raised afterwards (a higher limit is a new
// token). So a leaked or looping agent costs at most that, whatever the member's or team's caps.
// - Spend: the usage record's cost (usage_daily, the team's rate card, whole micro-euros, exactly as
//   lib/server/usage/spend.ts sums a member's) of the sandboxes Baton created with the token this
//   UTC month. Which ones is Baton's own record (api_token_sandboxes, written on create and fork);
//   the sandbox also carries `baton.token` in its metadata. Checked at request time (create, fork,
//   resume, keep-alive, template builds: lib/server/usage/cap-check.ts) from the last reading the
//   usage record holds, as the member caps are.
// - Concurrency: the sandboxes stamped with the token that are not terminated, expired or failed,
//   counted from the team's upstream list filtered by `metadata[baton.token]`, under the team's cap
//   lock, so parallel creates cannot slip past it.

const LIVE_STATUSES = ["creating", "running", "pausing", "paused", "resuming"];
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Notes that Baton created `sandboxId` with the token (its spend then counts for the token). */
export async function recordTokenSandbox(
  db: Db,
  input: { teamId: string; sandboxId: string; tokenId: string; now?: number },
): Promise<void> {
  await db
    .insertInto("api_token_sandboxes")
    .values({
      team_id: input.teamId,
      sandbox_id: input.sandboxId,
      token_id: input.tokenId,
      created_at: input.now ?? Date.now(),
    })
    .onConflict((oc) => oc.columns(["team_id", "sandbox_id"]).doNothing())
    .execute();
}

/** What the sandboxes made with the token cost this UTC month so far, whole micro-euros. */
export async function tokenMonthSpend(db: Db, teamId: string, tokenId: string, now = Date.now()): Promise<number> {
  const { start, end } = windowBounds("month", now);
  const rates = await getUsageRates(db, teamId);
  const rows = await db
    .selectFrom("usage_daily as u")
    .innerJoin("api_token_sandboxes as t", (j) =>
      j.onRef("t.team_id", "=", "u.team_id").onRef("t.sandbox_id", "=", "u.sandbox_id"),
    )
    .select(["u.cpu_ms", "u.gib_ms"])
    .where("u.team_id", "=", teamId)
    .where("t.token_id", "=", tokenId)
    .where("u.date", ">=", day(start))
    .where("u.date", "<", day(end))
    .execute();
  let spent = 0;
  for (const r of rows) spent += costMicro(Number(r.cpu_ms) / 1000, Number(r.gib_ms) / 1000, rates);
  return spent;
}

const newTokenAdvice =
  "A token's limits cannot be raised: its owner (or an admin of the team) can make a new token with higher limits in Settings → API tokens.";

/** The sentence a 402 spend_cap_reached by a token's own cap says. */
export function tokenCapReachedDetail(token: ActingApiToken, spentMicro: number, refused: string): string {
  return (
    `This API token's (${token.name}) monthly spend cap of ${formatMicro(token.spendCapMicro ?? 0)} is reached ` +
    `(${formatMicro(spentMicro)} spent this month, UTC, by the sandboxes made with it), so Baton does not ${refused}. ` +
    `Its running sandboxes are paused by the usage job once it sees the cap reached. ${newTokenAdvice}`
  );
}

/** 402 spend_cap_reached when the request's token has a monthly cap and it is reached. */
export async function assertUnderTokenCap(db: Db, team: ActingTeam, refused: string, now = Date.now()): Promise<void> {
  const token = team.apiToken;
  if (!token || token.spendCapMicro === null) return;
  const spent = await tokenMonthSpend(db, team.team.id, token.id, now);
  if (spent >= token.spendCapMicro)
    throw new AppError("spend_cap_reached", tokenCapReachedDetail(token, spent, refused));
}

/**
 * 429 concurrency_limit when the request's token has a limit of concurrent sandboxes and that many
 * made with it still exist (paused ones count: a resume would start them again). Reads the team's
 * upstream list filtered by the token's stamp; counts no further than the limit.
 */
export async function assertUnderTokenConcurrency(team: ActingTeam, refused: string): Promise<void> {
  const token = team.apiToken;
  if (!token || token.maxConcurrent === null) return;
  const max = token.maxConcurrent;
  const live = await withUpstream(team, async (orkestr) => {
    let n = 0;
    for await (const _ of orkestr.sandboxes.listAll({
      status: LIVE_STATUSES,
      metadata: { [CREATOR_TOKEN_KEY]: token.id },
      limit: 100,
    })) {
      if (++n >= max) break;
    }
    return n;
  });
  if (live >= max) {
    throw new AppError(
      "concurrency_limit",
      `This API token (${token.name}) may have at most ${max} sandbox${max === 1 ? "" : "es"} at once, and ${live} made with it ` +
        `still exist (running or paused), so Baton does not ${refused}. Terminate one first. ${newTokenAdvice}`,
    );
  }
}
