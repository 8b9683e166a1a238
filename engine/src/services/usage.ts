import { costEur, PRICES_EUR } from "../plans.js";
import type { Db } from "../store/db.js";

/** What a sandbox's meter has counted so far (SandboxMeter fits this shape). */
export interface MeterTotals {
  cpuSeconds: number;
  gbSeconds: number;
}

/** Sandboxes with a meter in memory, whose newest readings may not be persisted yet. */
export type LiveMeters = () => Iterable<[string, MeterTotals]>;

export interface UsageFigures {
  cpu_seconds: number;
  gb_seconds: number;
  cost_eur: number;
}

export interface UsageReport {
  currency: "EUR";
  granularity: "day";
  from: string;
  to: string;
  prices: { vcpu_hour_eur: number; gib_hour_eur: number };
  totals: UsageFigures & { sandboxes_created: number };
  series: (UsageFigures & { date: string; sandboxes_created: number })[];
  by_sandbox: (UsageFigures & { id: string; template: string | null; status: string | null })[];
}

/** `YYYY-MM-DD` of a UTC instant: usage is booked on UTC days. */
export function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Every UTC date from `from` to `to`, both included (inputs are `YYYY-MM-DD`). */
export function datesBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000)
    out.push(utcDate(t));
  return out;
}

const BY_SANDBOX_LIMIT = 50;

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;
const figures = (cpu: number, gb: number): UsageFigures => ({
  cpu_seconds: round(cpu, 3),
  gb_seconds: round(gb, 3),
  cost_eur: round(costEur(cpu, gb), 6),
});

/**
 * The one place metered usage is booked and read. The sampler's totals land on the sandbox row
 * (lifetime, as /metrics shows them) and, in the same transaction, their growth since the last
 * persist lands on that UTC day in usage_daily. Readers add what live meters counted since their
 * last persist, so the usage report, /metrics and the trial-credit gate see the same numbers.
 */
/** usage_daily rows of one account (the sandbox says whose it is); the `?` is the account id. */
const OF_ACCOUNT = "sandbox_id IN (SELECT id FROM sandboxes WHERE account_id = ?)";

export class UsageLedger {
  private readonly readRow;
  private readonly writeRow;
  private readonly book;

  constructor(
    private readonly db: Db,
    private readonly liveMeters: LiveMeters,
  ) {
    this.readRow = db.prepare("SELECT cpu_seconds, gb_seconds, account_id FROM sandboxes WHERE id = ?");
    this.writeRow = db.prepare("UPDATE sandboxes SET cpu_seconds = ?, gb_seconds = ? WHERE id = ?");
    this.book = db.prepare(
      `INSERT INTO usage_daily(sandbox_id, date, cpu_seconds, gb_seconds) VALUES (?, ?, ?, ?)
       ON CONFLICT(sandbox_id, date) DO UPDATE SET cpu_seconds = cpu_seconds + excluded.cpu_seconds, gb_seconds = gb_seconds + excluded.gb_seconds`,
    );
  }

  /** Persists a meter's lifetime totals and books their growth on the UTC day of `at`. */
  persist(sandboxId: string, totals: MeterTotals, at = Date.now()): void {
    this.db.transaction(() => {
      const before = this.readRow.get(sandboxId) as { cpu_seconds: number; gb_seconds: number } | undefined;
      if (!before) return;
      this.writeRow.run(totals.cpuSeconds, totals.gbSeconds, sandboxId);
      const cpu = totals.cpuSeconds - before.cpu_seconds;
      const gb = totals.gbSeconds - before.gb_seconds;
      if (cpu !== 0 || gb !== 0) this.book.run(sandboxId, utcDate(at), cpu, gb);
    })();
  }

  /** Usage an account's live meters counted since they were last persisted, per sandbox (booked on today). */
  private unbooked(account: string): Map<string, { cpu: number; gb: number }> {
    const out = new Map<string, { cpu: number; gb: number }>();
    for (const [id, meter] of this.liveMeters()) {
      const row = this.readRow.get(id) as { cpu_seconds: number; gb_seconds: number; account_id: string } | undefined;
      if (!row || row.account_id !== account) continue;
      const cpu = meter.cpuSeconds - row.cpu_seconds;
      const gb = meter.gbSeconds - row.gb_seconds;
      if (cpu !== 0 || gb !== 0) out.set(id, { cpu, gb });
    }
    return out;
  }

  /** Everything an account ever had metered, at pay-as-you-go prices: what its trial credit is drawn down by. */
  lifetimeCostEur(account: string): number {
    const row = this.db
      .prepare(
        `SELECT COALESCE(SUM(cpu_seconds), 0) AS cpu, COALESCE(SUM(gb_seconds), 0) AS gb FROM usage_daily WHERE ${OF_ACCOUNT}`,
      )
      .get(account) as { cpu: number; gb: number };
    let { cpu, gb } = row;
    for (const u of this.unbooked(account).values()) {
      cpu += u.cpu;
      gb += u.gb;
    }
    return costEur(cpu, gb);
  }

  /**
   * Usage per UTC day over [from, to] (`YYYY-MM-DD`, both included), optionally only for some
   * sandboxes: totals, a zero-filled daily series, and the 50 costliest sandboxes.
   */
  report(account: string, from: string, to: string, sandboxIds?: string[]): UsageReport {
    const only = sandboxIds?.length ? sandboxIds : null;
    const inIds = (column: string) => (only ? ` AND ${column} IN (${only.map(() => "?").join(",")})` : "");
    const ids = only ?? [];

    const days = new Map(datesBetween(from, to).map((d) => [d, { cpu: 0, gb: 0, created: 0 }]));
    const perDay = this.db
      .prepare(
        `SELECT date, SUM(cpu_seconds) AS cpu, SUM(gb_seconds) AS gb FROM usage_daily WHERE ${OF_ACCOUNT} AND date BETWEEN ? AND ?${inIds("sandbox_id")} GROUP BY date`,
      )
      .all(account, from, to, ...ids) as { date: string; cpu: number; gb: number }[];
    for (const r of perDay) Object.assign(days.get(r.date)!, { cpu: r.cpu, gb: r.gb });

    // A sandbox counts as created once it booted (a start that failed never ran, never billed).
    const startMs = Date.parse(`${from}T00:00:00Z`);
    const endMs = Date.parse(`${to}T00:00:00Z`) + 86_400_000;
    const created = this.db
      .prepare(
        `SELECT strftime('%Y-%m-%d', created_at / 1000, 'unixepoch') AS date, COUNT(*) AS n FROM sandboxes
         WHERE account_id = ? AND created_at >= ? AND created_at < ? AND started_at IS NOT NULL${inIds("id")} GROUP BY date`,
      )
      .all(account, startMs, endMs, ...ids) as { date: string; n: number }[];
    for (const r of created) {
      const d = days.get(r.date);
      if (d) d.created = r.n;
    }

    const perSandbox = new Map<string, { cpu: number; gb: number }>();
    const sandboxRows = this.db
      .prepare(
        `SELECT sandbox_id AS id, SUM(cpu_seconds) AS cpu, SUM(gb_seconds) AS gb FROM usage_daily WHERE ${OF_ACCOUNT} AND date BETWEEN ? AND ?${inIds("sandbox_id")} GROUP BY sandbox_id`,
      )
      .all(account, from, to, ...ids) as { id: string; cpu: number; gb: number }[];
    for (const r of sandboxRows) perSandbox.set(r.id, { cpu: r.cpu, gb: r.gb });

    const today = days.get(utcDate(Date.now()));
    if (today) {
      for (const [id, u] of this.unbooked(account)) {
        if (only && !only.includes(id)) continue;
        today.cpu += u.cpu;
        today.gb += u.gb;
        const s = perSandbox.get(id) ?? { cpu: 0, gb: 0 };
        perSandbox.set(id, { cpu: s.cpu + u.cpu, gb: s.gb + u.gb });
      }
    }

    let cpu = 0;
    let gb = 0;
    let sandboxesCreated = 0;
    const series = [...days].map(([date, d]) => {
      cpu += d.cpu;
      gb += d.gb;
      sandboxesCreated += d.created;
      return { date, ...figures(d.cpu, d.gb), sandboxes_created: d.created };
    });

    const costliest = [...perSandbox]
      .map(([id, u]) => ({ id, cost: costEur(u.cpu, u.gb), u }))
      .sort((a, b) => b.cost - a.cost || a.id.localeCompare(b.id))
      .slice(0, BY_SANDBOX_LIMIT);
    const describe = this.db.prepare("SELECT template, status FROM sandboxes WHERE id = ?");
    const bySandbox = costliest.map(({ id, u }) => {
      const s = describe.get(id) as { template: string; status: string } | undefined;
      return { id, ...figures(u.cpu, u.gb), template: s?.template ?? null, status: s?.status ?? null };
    });

    return {
      currency: "EUR",
      granularity: "day",
      from: `${from}T00:00:00Z`,
      to: `${to}T23:59:59Z`,
      prices: { vcpu_hour_eur: PRICES_EUR.vcpuHour, gib_hour_eur: PRICES_EUR.gibHour },
      totals: { ...figures(cpu, gb), sandboxes_created: sandboxesCreated },
      series,
      by_sandbox: bySandbox,
    };
  }
}
