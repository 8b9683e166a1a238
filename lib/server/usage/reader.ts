import "server-only";
import type { OrkestrClient } from "../../orkestr/core";
import { OrkestrError } from "../../orkestr/errors";
import type { Sandbox } from "../../orkestr/schemas/sandboxes";
import { CREATOR_TEAM_KEY, CREATOR_USER_KEY } from "../../sandbox-creator";
import type { Db } from "../db/index";
import type { Role } from "../db/schema";
import { acquireLease, processHolder } from "../db/leases";
import { scheduleLeasedJob, type LeasedJobSchedule, type TimerApi } from "../leased-job";
import { can } from "../rbac";
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

/**
 * The connections the job uses for a team: one to read its sandboxes' counters, and one to pause
 * them for a spend cap. Pausing is a change, so it goes through a connection of a member whose role
 * may change sandboxes (sandboxes.write: owner, admin, member); a viewer's connection only reads.
 */
export interface TeamConnection {
  /** Reads the team's sandboxes (any enabled member's working connection). */
  client: OrkestrClient;
  /** Pauses them, or null when no member whose role may pause has a usable connection. */
  pauser: OrkestrClient | null;
  /** Whose connection the pauser is (the audit names it), or null. */
  pauserUserId: string | null;
  /** Why there is no pauser (said in the audited spend_cap.pause_failed), or null. */
  noPauser: string | null;
}

/** A team's connections for the job, or null when it has no connection Baton can use. */
export type TeamClientFor = (db: Db, teamId: string) => Promise<TeamConnection | null>;

export interface ConnectionCandidate {
  id: string;
  userId: string;
  /** The member's role (a string as stored; an unknown one grants nothing). */
  role: string;
  lastError: string | null;
  updatedAt: number;
}

const mayPause = (c: ConnectionCandidate) => can(c.role as Role, "sandboxes.write");

/**
 * The order the job tries a team's connections in: the last checked without error first, then the
 * most recently changed; for pausing, only those whose member's role may change sandboxes.
 */
export function rankConnections(candidates: readonly ConnectionCandidate[]): {
  read: ConnectionCandidate[];
  pause: ConnectionCandidate[];
} {
  const read = [...candidates].sort(
    (a, b) => Number(a.lastError !== null) - Number(b.lastError !== null) || b.updatedAt - a.updatedAt,
  );
  return { read, pause: read.filter((c) => mayPause(c)) };
}

/** Why no connection can pause, in the audit's words. */
export function noPauserReason(candidates: readonly ConnectionCandidate[], unusable: number): string {
  const writers = candidates.filter((c) => mayPause(c)).length;
  if (writers === 0)
    return (
      "No member whose role may pause sandboxes (owner, admin or member) has an orkestr connection in this team; " +
      "only viewers' connections, which Baton uses to read usage but not to pause."
    );
  return `The connections of the members who may pause sandboxes cannot be used (${unusable} unreadable token(s)); reconnect one.`;
}

/**
 * The connections the job reads and pauses a team through: connections bound to the team
 * (orkestr_connections.team_id) of enabled members. On the local engine every member's token
 * reaches the same account (one per team).
 */
export const teamClient: TeamClientFor = async (db, teamId) => {
  const rows = await db
    .selectFrom("orkestr_connections as c")
    .innerJoin("memberships as m", (j) => j.onRef("m.team_id", "=", "c.team_id").onRef("m.user_id", "=", "c.user_id"))
    .innerJoin("users as u", "u.id", "c.user_id")
    .select(["c.id", "c.user_id", "c.last_error", "c.updated_at", "m.role"])
    .where("c.team_id", "=", teamId)
    .where("m.disabled_at", "is", null)
    .where("u.disabled_at", "is", null)
    .execute();
  const candidates: ConnectionCandidate[] = rows.map((r) => ({
    id: r.id,
    userId: r.user_id,
    role: r.role,
    lastError: r.last_error,
    updatedAt: Number(r.updated_at),
  }));
  const ranked = rankConnections(candidates);
  const opened = new Map<string, OrkestrClient | null>();
  const open = async (c: ConnectionCandidate): Promise<OrkestrClient | null> => {
    if (!opened.has(c.id))
      opened.set(
        c.id,
        await orkestrFor(c.userId, { db, connectionId: c.id, client: { maxRetries: 0, timeoutMs: 15_000 } }).catch(
          // An unreadable token (vault key changed, plain-http URL): the next connection.
          () => null,
        ),
      );
    return opened.get(c.id)!;
  };
  let client: OrkestrClient | null = null;
  for (const c of ranked.read) if ((client = await open(c))) break;
  if (!client) return null;
  for (const c of ranked.pause) {
    const pauser = await open(c);
    if (pauser) return { client, pauser, pauserUserId: c.userId, noPauser: null };
  }
  const unusable = ranked.pause.filter((c) => opened.get(c.id) === null).length;
  return { client, pauser: null, pauserUserId: null, noPauser: noPauserReason(candidates, unusable) };
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
  const connection = await (options.clientFor ?? teamClient)(db, teamId);
  if (!connection) return { ...run, error: "no connection" };
  const { client } = connection;
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
  await runTeamCaps(db, teamId, connection, at());
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
  /** This process's name in the lease (default processHolder(); tests play several instances). */
  holder?: string;
  clientFor?: TeamClientFor;
}

export type UsageReaderSchedule = LeasedJobSchedule<TeamRun[]>;

/** Schedules the job: a first run after a few seconds, then one per interval (timers unref'd). */
export function scheduleUsageReader(options: UsageReaderOptions): UsageReaderSchedule {
  const intervalMs = options.intervalMs ?? usageIntervalMs();
  const log = options.log ?? ((m: string, err?: unknown) => console.error(`[baton] usage reader: ${m}`, err ?? ""));
  return scheduleLeasedJob({
    db: options.db,
    run: async (db) => {
      const runs = await runUsageReader(db, intervalMs, options.holder, Date.now(), {
        ...(options.clientFor ? { clientFor: options.clientFor } : {}),
      });
      for (const r of runs ?? []) if (r.error && r.error !== "no connection") log(`team ${r.teamId}: ${r.error}`);
      return runs;
    },
    intervalMs,
    firstDelayMs: Math.min(USAGE_READER.firstDelayMs, intervalMs),
    timers: options.timers,
    log,
    failure: "a run failed (the next one will try again)",
  });
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
