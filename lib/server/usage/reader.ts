import "server-only";
import type { OrkestrClient } from "../../orkestr/core";
import { OrkestrError } from "../../orkestr/errors";
import type { Sandbox } from "../../orkestr/schemas/sandboxes";
import { CREATOR_TEAM_KEY, CREATOR_USER_KEY } from "../../sandbox-creator";
import type { Db } from "../db/index";
import { acquireLease, processHolder } from "../db/leases";
import type { TimerApi } from "../housekeeping";
import { orkestrFor } from "../tokens";
import { runTeamCaps } from "./caps-run";
import { bookReading, finishMeter, openMeters } from "./record";

// The reading job (issue 22): for each team with a working connection, the lifetime counters of its
// live sandboxes (and of those it holds an unfinished meter for) are read and booked
// (lib/server/usage/record.ts). A sandbox the upstream reports terminated gets its final reading;
// one it no longer knows (404) is closed without one (the last reading stands).
//
// At most once per interval across Baton instances: a run first takes the `usage-reader` lease for
// one interval without renewal (lib/server/db/leases.ts), like housekeeping. Booking is safe to
// replay anyway, so a run that overlaps another books nothing twice.

export const USAGE_READER = {
  defaultIntervalMs: 60_000,
  minIntervalMs: 1000,
  /** The first run after start: not in the way of the first requests. */
  firstDelayMs: 5000,
  /** Metrics calls in flight per team. */
  parallel: 8,
} as const;

const LEASE = "usage-reader";
const LIVE_STATUSES = ["creating", "running", "pausing", "paused", "resuming"];
const TERMINAL = new Set(["terminated", "expired", "failed"]);

/** BATON_USAGE_INTERVAL_MS, at least one second (default one minute). */
export function usageIntervalMs(env: Record<string, string | undefined> = process.env): number {
  const raw = Number(env.BATON_USAGE_INTERVAL_MS);
  if (!Number.isFinite(raw) || raw <= 0) return USAGE_READER.defaultIntervalMs;
  return Math.max(USAGE_READER.minIntervalMs, Math.round(raw));
}

/** An orkestr client of a team, or null when it has no connection Baton can use. */
export type TeamClientFor = (db: Db, teamId: string) => Promise<OrkestrClient | null>;

/**
 * The connection the job reads a team through: a connection bound to the team (orkestr_connections
 * .team_id) of an enabled member, the last checked without error first, then the most recently
 * changed. On the local engine every member's token reaches the same account (one per team).
 */
export const teamClient: TeamClientFor = async (db, teamId) => {
  const rows = await db
    .selectFrom("orkestr_connections as c")
    .innerJoin("memberships as m", (j) => j.onRef("m.team_id", "=", "c.team_id").onRef("m.user_id", "=", "c.user_id"))
    .innerJoin("users as u", "u.id", "c.user_id")
    .select(["c.id", "c.user_id", "c.last_error", "c.updated_at"])
    .where("c.team_id", "=", teamId)
    .where("m.disabled_at", "is", null)
    .where("u.disabled_at", "is", null)
    .execute();
  rows.sort(
    (a, b) =>
      Number(a.last_error !== null) - Number(b.last_error !== null) || Number(b.updated_at) - Number(a.updated_at),
  );
  for (const row of rows) {
    try {
      return await orkestrFor(row.user_id, { db, connectionId: row.id, client: { maxRetries: 0, timeoutMs: 15_000 } });
    } catch {
      // An unreadable token (vault key changed, plain-http URL): the next connection.
    }
  }
  return null;
};

export interface TeamRun {
  teamId: string;
  /** Sandboxes whose counters were read. */
  read: number;
  /** Final readings booked or meters closed. */
  finished: number;
  /** Why the team was not read (no connection, the upstream failed), or null. */
  error: string | null;
}

export interface ReadOptions {
  /** The time readings are booked at (tests); the time of each read otherwise. */
  now?: number;
  /** Only these teams (default: every team). */
  teams?: string[];
  clientFor?: TeamClientFor;
}

function creatorOf(sandbox: Pick<Sandbox, "metadata">): string | null {
  const user = sandbox.metadata?.[CREATOR_USER_KEY];
  return typeof user === "string" && user ? user : null;
}

async function inParallel<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(workers);
}

/** Reads and books one sandbox's counters through `client`; true when it was terminal. */
export async function readSandbox(
  db: Db,
  client: OrkestrClient,
  teamId: string,
  sandbox: { id: string; userId: string | null; template: string | null; status: string | null },
  at: () => number,
): Promise<"read" | "finished"> {
  try {
    const m = await client.sandboxes.metrics(sandbox.id);
    const status = m.sandbox_status ?? sandbox.status;
    const final = status !== null && TERMINAL.has(status);
    await bookReading(db, {
      teamId,
      sandboxId: sandbox.id,
      cpuSeconds: m.lifetime?.cpu_seconds ?? 0,
      gibSeconds: m.lifetime?.gb_seconds ?? 0,
      at: at(),
      userId: sandbox.userId,
      template: sandbox.template,
      status,
      final,
    });
    return final ? "finished" : "read";
  } catch (err) {
    if (err instanceof OrkestrError && (err.status === 404 || err.status === 410)) {
      // Gone past its retention: the last reading stands.
      await finishMeter(db, teamId, sandbox.id, at());
      return "finished";
    }
    throw err;
  }
}

async function readTeam(db: Db, teamId: string, options: ReadOptions): Promise<TeamRun> {
  const run: TeamRun = { teamId, read: 0, finished: 0, error: null };
  const at = () => options.now ?? Date.now();
  const client = await (options.clientFor ?? teamClient)(db, teamId);
  if (!client) return { ...run, error: "no connection" };
  const targets = new Map<
    string,
    { id: string; userId: string | null; template: string | null; status: string | null }
  >();
  try {
    for await (const s of client.sandboxes.listAll({ status: LIVE_STATUSES, limit: 100 })) {
      // A sandbox Baton stamped for another team is that team's (a token that sees several).
      const stampedTeam = s.metadata?.[CREATOR_TEAM_KEY];
      if (typeof stampedTeam === "string" && stampedTeam && stampedTeam !== teamId) continue;
      targets.set(s.id, { id: s.id, userId: creatorOf(s), template: s.template ?? null, status: s.status });
    }
  } catch (err) {
    return { ...run, error: err instanceof Error ? err.message : String(err) };
  }
  for (const m of await openMeters(db, teamId))
    if (!targets.has(m.sandbox_id))
      targets.set(m.sandbox_id, { id: m.sandbox_id, userId: m.user_id, template: m.template, status: null });
  const errors: string[] = [];
  await inParallel([...targets.values()], USAGE_READER.parallel, async (s) => {
    try {
      const outcome = await readSandbox(db, client, teamId, s, at);
      run.read++;
      if (outcome === "finished") run.finished++;
    } catch (err) {
      errors.push(`${s.id}: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  await markRead(db, teamId, at());
  // The team's spend caps, from the figures just booked (lib/server/usage/caps-run.ts).
  await runTeamCaps(db, teamId, client, at());
  return { ...run, error: errors.length ? errors.slice(0, 3).join("; ") : null };
}

/** Notes when the job last read a team (the report's last_reading_at). */
async function markRead(db: Db, teamId: string, at: number): Promise<void> {
  await db
    .insertInto("team_usage_settings")
    .values({ team_id: teamId, updated_at: null, updated_by: null, last_reading_at: at })
    .onConflict((oc) => oc.column("team_id").doUpdateSet({ last_reading_at: at }))
    .execute();
}

/** One run over every team (or `teams`), without the lease: for tests, the bench and scheduled runs. */
export async function readUsageOnce(db: Db, options: ReadOptions = {}): Promise<TeamRun[]> {
  const teamIds = options.teams ?? (await db.selectFrom("teams").select("id").orderBy("id").execute()).map((t) => t.id);
  const runs: TeamRun[] = [];
  // Teams one after another: one instance's share of the upstream stays small.
  for (const teamId of teamIds) runs.push(await readTeam(db, teamId, options));
  return runs;
}

/** A scheduled run: only when this process takes the lease for the interval. */
export async function runUsageReader(
  db: Db,
  intervalMs: number,
  holder: string = processHolder(),
  now = Date.now(),
  options: Pick<ReadOptions, "clientFor"> = {},
): Promise<TeamRun[] | null> {
  if (!(await acquireLease(db, { name: LEASE, holder, now, ttlMs: intervalMs, renew: false }))) return null;
  return readUsageOnce(db, options);
}

/** When the job next reads (for the report): the lease's end, or one interval after the last reading. */
export async function nextReadingAt(db: Db, lastReadingAt: number | null, now = Date.now()): Promise<number> {
  const lease = await db.selectFrom("leases").select("expires_at").where("name", "=", LEASE).executeTakeFirst();
  const interval = usageIntervalMs();
  const candidate = lease ? Number(lease.expires_at) : (lastReadingAt ?? now) + interval;
  return Math.max(candidate, now);
}

export interface UsageReaderOptions {
  db: () => Promise<Db> | null;
  timers?: TimerApi;
  intervalMs?: number;
  log?: (message: string, err?: unknown) => void;
}

export interface UsageReaderSchedule {
  tick(): Promise<TeamRun[] | null>;
  stop(): void;
}

/** Schedules the job: a first run after a few seconds, then one per interval (timers unref'd). */
export function scheduleUsageReader(options: UsageReaderOptions): UsageReaderSchedule {
  const timers = options.timers ?? (globalThis as unknown as TimerApi);
  const intervalMs = options.intervalMs ?? usageIntervalMs();
  const log = options.log ?? ((m: string, err?: unknown) => console.error(`[baton] usage reader: ${m}`, err ?? ""));
  let running: Promise<TeamRun[] | null> | null = null;
  const tick = (): Promise<TeamRun[] | null> => {
    if (running) return running;
    const pass = (async () => {
      try {
        const pending = options.db();
        if (!pending) return null;
        const runs = await runUsageReader(await pending, intervalMs);
        for (const r of runs ?? []) if (r.error && r.error !== "no connection") log(`team ${r.teamId}: ${r.error}`);
        return runs;
      } catch (err) {
        log("a run failed (the next one will try again)", err);
        return null;
      }
    })();
    running = pass;
    void pass.finally(() => {
      if (running === pass) running = null;
    });
    return pass;
  };
  let interval: unknown = null;
  const first = timers.setTimeout(
    () => {
      void tick();
      const handle = timers.setInterval(() => void tick(), intervalMs);
      handle.unref?.();
      interval = handle;
    },
    Math.min(USAGE_READER.firstDelayMs, intervalMs),
  );
  first.unref?.();
  return {
    tick,
    stop() {
      timers.clearTimeout(first);
      if (interval !== null) timers.clearInterval(interval);
    },
  };
}

const holder = globalThis as typeof globalThis & { __batonUsageReader?: UsageReaderSchedule };

/** Starts this process's reading job once (later calls return the running schedule). */
export function startUsageReader(options: UsageReaderOptions): UsageReaderSchedule {
  holder.__batonUsageReader ??= scheduleUsageReader(options);
  return holder.__batonUsageReader;
}

/** Stops it (tests, shutdown). */
export function stopUsageReader(): void {
  holder.__batonUsageReader?.stop();
  holder.__batonUsageReader = undefined;
}
