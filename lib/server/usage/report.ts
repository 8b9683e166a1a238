import "server-only";
import {
  costMicro,
  type UsageDay,
  type UsageFigures,
  type UsageMember,
  type UsageRates,
  type UsageReport,
  type UsageRunning,
  type UsageSandbox,
  type UsageStorage,
} from "../../usage/report";
import type { Db } from "../db/index";
import { listTeamMembers } from "../db/teams";
import { getUsageRates } from "./rates";
import { nextReadingAt } from "./reader";

// GET /api/usage's answer (issue 22), from Baton's own record (usage_daily, usage_meters): cost per
// (sandbox, UTC day) row with the team's rate card via costMicro, summed as whole micro-euros.
// Scope: owners and admins see everyone's ("team"); members and viewers their own ("self"), with
// the whole team's total beside it.

const DAY_MS = 86_400_000;
const SANDBOX_LIMIT = 500;
export const FORMER_MEMBER = "Former member";

export interface ReportInput {
  teamId: string;
  userId: string;
  scope: "team" | "self";
  from: string;
  to: string;
  now?: number;
  /** Storage sizes from the upstream, or null when it could not be read. */
  storage: { volumes_gb: number; snapshots_gb: number; templates_gb: number } | null;
}

interface Row {
  date: string;
  sandbox_id: string;
  user_id: string | null;
  template: string | null;
  cpu_ms: number;
  gib_ms: number;
  cost: number;
}

const zero = (): UsageFigures => ({ cpu_seconds: 0, gib_seconds: 0, cost_micro: 0 });
/** Seconds from milliseconds, without float noise (3 decimals at most). */
const sec = (ms: number) => ms / 1000;

function add(into: UsageFigures & { _cpu?: number; _gib?: number }, r: Row): void {
  into._cpu = (into._cpu ?? 0) + r.cpu_ms;
  into._gib = (into._gib ?? 0) + r.gib_ms;
  into.cpu_seconds = sec(into._cpu);
  into.gib_seconds = sec(into._gib);
  into.cost_micro += r.cost;
}

function strip<T extends object>(f: T): T {
  const { _cpu, _gib, ...rest } = f as T & { _cpu?: number; _gib?: number };
  void _cpu;
  void _gib;
  return rest as T;
}

function datesBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += DAY_MS)
    out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

async function rowsOf(db: Db, teamId: string, from: string, to: string, rates: UsageRates): Promise<Row[]> {
  const rows = await db
    .selectFrom("usage_daily")
    .select(["date", "sandbox_id", "user_id", "template", "cpu_ms", "gib_ms"])
    .where("team_id", "=", teamId)
    .where("date", ">=", from)
    .where("date", "<=", to)
    .execute();
  return rows.map((r) => {
    const cpu = Number(r.cpu_ms);
    const gib = Number(r.gib_ms);
    return { ...r, cpu_ms: cpu, gib_ms: gib, cost: costMicro(sec(cpu), sec(gib), rates) };
  });
}

export function storageFigures(
  sizes: { volumes_gb: number; snapshots_gb: number; templates_gb: number },
  rates: UsageRates,
): UsageStorage {
  const total = sizes.volumes_gb + sizes.snapshots_gb + sizes.templates_gb;
  const billable = Math.max(0, total - rates.free_storage_gb);
  return {
    ...sizes,
    free_gb: rates.free_storage_gb,
    billable_gb: billable,
    month_cost_micro: Math.round(billable * rates.storage_gb_month_micro),
  };
}

export async function buildUsageReport(db: Db, input: ReportInput): Promise<UsageReport> {
  const now = input.now ?? Date.now();
  const rates = await getUsageRates(db, input.teamId);
  const inScope = (userId: string | null) => input.scope === "team" || userId === input.userId;

  const rows = await rowsOf(db, input.teamId, input.from, input.to, rates);
  const team_totals = zero();
  const totals = { ...zero(), sandboxes: 0 };
  const days = new Map<string, UsageDay>(
    datesBetween(input.from, input.to).map((date) => [date, { date, ...zero(), by_member: {}, by_template: {} }]),
  );
  const bySandbox = new Map<string, UsageSandbox>();
  const byMember = new Map<string, UsageFigures & { ids: Set<string> }>();
  for (const r of rows) {
    add(team_totals, r);
    if (!inScope(r.user_id)) continue;
    add(totals, r);
    const day = days.get(r.date);
    if (day) {
      add(day, r);
      const m = r.user_id ?? "";
      const t = r.template ?? "";
      day.by_member[m] = (day.by_member[m] ?? 0) + r.cost;
      day.by_template[t] = (day.by_template[t] ?? 0) + r.cost;
    }
    let s = bySandbox.get(r.sandbox_id);
    if (!s) {
      s = { id: r.sandbox_id, user_id: r.user_id, template: r.template, status: null, last_read_at: null, ...zero() };
      bySandbox.set(r.sandbox_id, s);
    }
    add(s, r);
    const key = r.user_id ?? "";
    let m = byMember.get(key);
    if (!m) {
      m = { ...zero(), ids: new Set() };
      byMember.set(key, m);
    }
    add(m, r);
    m.ids.add(r.sandbox_id);
  }
  totals.sandboxes = bySandbox.size;

  // The sandboxes' status and last reading, from their meters.
  const meters = await db
    .selectFrom("usage_meters")
    .selectAll()
    .where("team_id", "=", input.teamId)
    .where((eb) => eb.or([eb("final_at", "is", null), eb("read_at", ">=", Date.parse(`${input.from}T00:00:00Z`))]))
    .execute();
  const meterOf = new Map(meters.map((m) => [m.sandbox_id, m]));
  const sandboxes = [...bySandbox.values()]
    .map((s) => {
      const m = meterOf.get(s.id);
      return strip({
        ...s,
        status: m?.status ?? null,
        last_read_at: m ? new Date(Number(m.read_at)).toISOString() : null,
      });
    })
    .sort((a, b) => b.cost_micro - a.cost_micro || a.id.localeCompare(b.id))
    .slice(0, SANDBOX_LIMIT);

  const people = await listTeamMembers(db, input.teamId);
  const known = new Map(people.map((p) => [p.user.id, p.user]));
  const memberIds = new Set(byMember.keys());
  // Everyone of the team (in scope) is listed, with zeros when they spent nothing.
  for (const p of people) if (inScope(p.user.id)) memberIds.add(p.user.id);
  const members: UsageMember[] = [...memberIds]
    .map((key) => {
      const f = byMember.get(key);
      const userId = key === "" ? null : key;
      const user = userId ? known.get(userId) : undefined;
      return {
        ...(f ? strip({ cpu_seconds: f.cpu_seconds, gib_seconds: f.gib_seconds, cost_micro: f.cost_micro }) : zero()),
        user_id: userId,
        name: userId === null ? null : (user?.name ?? FORMER_MEMBER),
        email: user?.email ?? null,
        sandboxes: f?.ids.size ?? 0,
      };
    })
    .sort((a, b) => b.cost_micro - a.cost_micro || String(a.name).localeCompare(String(b.name)));

  const settings = await db
    .selectFrom("team_usage_settings")
    .select("last_reading_at")
    .where("team_id", "=", input.teamId)
    .executeTakeFirst();
  const lastReading = settings?.last_reading_at != null ? Number(settings.last_reading_at) : null;

  return {
    currency: "EUR",
    from: input.from,
    to: input.to,
    generated_at: new Date(now).toISOString(),
    last_reading_at: lastReading !== null ? new Date(lastReading).toISOString() : null,
    next_reading_at: new Date(await nextReadingAt(db, lastReading, now)).toISOString(),
    rates,
    scope: input.scope,
    totals: strip(totals),
    team_totals: strip(team_totals),
    days: [...days.values()].map(strip),
    members,
    sandboxes,
    storage: input.storage ? storageFigures(input.storage, rates) : null,
    month: await monthFigures(db, input, rates, now, meters, inScope),
  };
}

/** A sandbox's last two readings (usage_meters): what its run-rate is computed from. */
export interface MeterRow {
  sandbox_id: string;
  user_id: string | null;
  template: string | null;
  status: string | null;
  cpu_ms: number;
  gib_ms: number;
  read_at: number;
  prev_cpu_ms: number | null;
  prev_gib_ms: number | null;
  prev_read_at: number | null;
  final_at: number | null;
}

/**
 * What each running sandbox spends per hour, from its last two readings, most first: the month's
 * run-rate on /usage and the spend caps' possible overshoot (lib/server/usage/caps-api.ts).
 */
export function runningRates(meters: readonly MeterRow[], rates: UsageRates): UsageRunning[] {
  const running: UsageRunning[] = [];
  for (const m of meters) {
    if (m.final_at !== null || m.status !== "running" || m.prev_read_at === null) continue;
    const dt = Number(m.read_at) - Number(m.prev_read_at);
    if (dt <= 0) continue;
    const dCpu = Math.max(0, Number(m.cpu_ms) - Number(m.prev_cpu_ms ?? 0));
    const dGib = Math.max(0, Number(m.gib_ms) - Number(m.prev_gib_ms ?? 0));
    // µ€ per hour between the last two readings: the cost of the interval scaled to an hour, in
    // whole micro-euros (the scaling is done on the interval's exact quantities, rounded once).
    const micro_per_hour = costMicro((dCpu * 3600) / dt, (dGib * 3600) / dt, rates);
    running.push({ id: m.sandbox_id, user_id: m.user_id, template: m.template, micro_per_hour });
  }
  running.sort((a, b) => b.micro_per_hour - a.micro_per_hour || a.id.localeCompare(b.id));
  return running;
}

async function monthFigures(
  db: Db,
  input: ReportInput,
  rates: UsageRates,
  now: number,
  meters: MeterRow[],
  inScope: (userId: string | null) => boolean,
): Promise<UsageReport["month"]> {
  const d = new Date(now);
  const first = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  const rows = await rowsOf(
    db,
    input.teamId,
    first.toISOString().slice(0, 10),
    new Date(end - DAY_MS).toISOString().slice(0, 10),
    rates,
  );
  const so_far_micro = rows.filter((r) => inScope(r.user_id)).reduce((n, r) => n + r.cost, 0);
  const running = runningRates(
    meters.filter((m) => inScope(m.user_id)),
    rates,
  );
  const run_rate_micro_per_hour = running.reduce((n, r) => n + r.micro_per_hour, 0);
  const hoursLeft = Math.max(0, end - now) / 3_600_000;
  return {
    month: first.toISOString().slice(0, 7),
    so_far_micro,
    run_rate_micro_per_hour,
    running,
    forecast_micro: so_far_micro + Math.round(run_rate_micro_per_hour * hoursLeft),
    ends_at: new Date(end).toISOString(),
  };
}
