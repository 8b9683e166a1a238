// The /usage page's tables as data: columns, and rows of cells that each carry the text shown and
// the value exported. The page renders these, and the CSV export (./csv.ts) writes the same rows
// and columns, so the file is exactly what is shown; money exports exact (EUR to the micro-euro,
// from integers), quantities as the report gives them. Pure and client-safe.

import { formatMicro } from "../format";
import { MICRO_PER_EUR, type UsageMember, type UsageRunning, type UsageSandbox, type UsageStorage } from "./report";
import { memberLabel, templateLabel, type DayRow, type Grouping, type SeriesKey } from "./series";

export interface UsageCell {
  /** What the page shows. */
  text: string;
  /** What the CSV holds (and the cell's data-value). */
  value: string;
  /** Right-aligned figures. */
  numeric?: boolean;
  /** The cell links here (a console path, the team added by TeamLink). */
  href?: string;
}

export interface UsageTableRow {
  key: string;
  cells: UsageCell[];
}

export interface UsageTable {
  /** Short name for the file and test ids: "days", "sandboxes", "members", "storage", "running". */
  name: string;
  caption: string;
  columns: string[];
  rows: UsageTableRow[];
}

/** Whole µ€ as an exact EUR decimal with six places: 1_234_567 → "1.234567", -5 → "-0.000005". */
export function eurValue(micro: number): string {
  const m = Math.round(micro);
  const abs = Math.abs(m);
  const whole = Math.floor(abs / MICRO_PER_EUR);
  const frac = String(abs % MICRO_PER_EUR).padStart(6, "0");
  return `${m < 0 ? "-" : ""}${whole}.${frac}`;
}

export function money(micro: number): UsageCell {
  return { text: formatMicro(micro), value: eurValue(micro), numeric: true };
}

/** Seconds or GiB-seconds: whole from 100 on (grouped), else up to three decimals. */
export function formatQuantity(n: number): string {
  if (!Number.isFinite(n)) return "—";
  const text = Math.abs(n) >= 100 ? String(Math.round(n)) : String(+n.toFixed(3));
  return text.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

function quantity(n: number): UsageCell {
  return { text: formatQuantity(n), value: String(n), numeric: true };
}

function text(t: string, href?: string): UsageCell {
  return { text: t, value: t, ...(href ? { href } : {}) };
}

/** GB of storage: up to two decimals. */
export function formatGb(gb: number): string {
  return `${+gb.toFixed(2)} GB`;
}

function gb(n: number): UsageCell {
  return { text: formatGb(n), value: String(n), numeric: true };
}

export function daysTable(rows: readonly DayRow[], keys: readonly SeriesKey[], grouping: Grouping): UsageTable {
  return {
    name: `days-by-${grouping}`,
    caption: `Cost per day (UTC) by ${grouping}, EUR`,
    columns: ["Day (UTC)", ...keys.map((k) => k.label), "Total (EUR)"],
    rows: rows.map((r) => ({
      key: r.date,
      cells: [text(r.date), ...keys.map((k) => money(r.values[k.key] ?? 0)), money(r.total_micro)],
    })),
  };
}

export type SandboxSort = "cost" | "cpu" | "memory";

const SORT_FIELD: Record<SandboxSort, keyof Pick<UsageSandbox, "cost_micro" | "cpu_seconds" | "gib_seconds">> = {
  cost: "cost_micro",
  cpu: "cpu_seconds",
  memory: "gib_seconds",
};

/** Most first by the chosen figure; ties by cost, then id, so the order is stable. */
export function sortSandboxes(sandboxes: readonly UsageSandbox[], sort: SandboxSort): UsageSandbox[] {
  const f = SORT_FIELD[sort];
  return [...sandboxes].sort((a, b) => b[f] - a[f] || b.cost_micro - a.cost_micro || a.id.localeCompare(b.id));
}

export function sandboxesTable(
  sandboxes: readonly UsageSandbox[],
  members: readonly UsageMember[],
  sort: SandboxSort,
  limit: number,
  hrefOf: (id: string) => string,
): UsageTable {
  return {
    name: "sandboxes",
    caption: `Top sandboxes by ${sort === "cost" ? "cost" : sort === "cpu" ? "CPU-seconds" : "GiB-seconds"}`,
    columns: ["Sandbox", "Created by", "Template", "Status", "CPU-seconds", "GiB-seconds", "Cost (EUR)"],
    rows: sortSandboxes(sandboxes, sort)
      .slice(0, limit)
      .map((s) => ({
        key: s.id,
        cells: [
          text(s.id, hrefOf(s.id)),
          text(memberLabel(s.user_id, members)),
          text(templateLabel(s.template)),
          text(s.status ?? "—"),
          quantity(s.cpu_seconds),
          quantity(s.gib_seconds),
          money(s.cost_micro),
        ],
      })),
  };
}

export function membersTable(members: readonly UsageMember[]): UsageTable {
  return {
    name: "members",
    caption: "Usage per member",
    columns: ["Member", "Sandboxes", "CPU-seconds", "GiB-seconds", "Cost (EUR)"],
    rows: [...members]
      .sort(
        (a, b) =>
          b.cost_micro - a.cost_micro || memberLabel(a.user_id, members).localeCompare(memberLabel(b.user_id, members)),
      )
      .map((m) => ({
        key: m.user_id ?? "",
        cells: [
          text(memberLabel(m.user_id, members)),
          { text: String(m.sandboxes), value: String(m.sandboxes), numeric: true },
          quantity(m.cpu_seconds),
          quantity(m.gib_seconds),
          money(m.cost_micro),
        ],
      })),
  };
}

export function storageTable(storage: UsageStorage): UsageTable {
  const total = storage.volumes_gb + storage.snapshots_gb + storage.templates_gb;
  const row = (key: string, label: string, cell: UsageCell) => ({ key, cells: [text(label), cell] });
  return {
    name: "storage",
    caption: "Storage (GB, decimal gigabytes)",
    columns: ["Storage", "Amount"],
    rows: [
      row("volumes", "Volumes", gb(storage.volumes_gb)),
      row("snapshots", "Snapshots", gb(storage.snapshots_gb)),
      row("templates", "Templates", gb(storage.templates_gb)),
      row("total", "Total", gb(+total.toFixed(6))),
      row("free", "Free", gb(storage.free_gb)),
      row("billable", "Billable", gb(storage.billable_gb)),
      row("month", "Monthly estimate (EUR)", money(storage.month_cost_micro)),
    ],
  };
}

export function runningTable(
  running: readonly UsageRunning[],
  members: readonly UsageMember[],
  hrefOf: (id: string) => string,
): UsageTable {
  return {
    name: "running",
    caption: "What runs now: the sandboxes that make up the run-rate",
    columns: ["Sandbox", "Created by", "Template", "EUR per hour"],
    rows: [...running]
      .sort((a, b) => b.micro_per_hour - a.micro_per_hour || a.id.localeCompare(b.id))
      .map((r) => ({
        key: r.id,
        cells: [
          text(r.id, hrefOf(r.id)),
          text(memberLabel(r.user_id, members)),
          text(templateLabel(r.template)),
          money(r.micro_per_hour),
        ],
      })),
  };
}

/** A file name for a table's export: `baton-usage-<table>-<from>-to-<to>.csv`. */
export function csvFileName(table: UsageTable, from: string, to: string): string {
  return `baton-usage-${table.name}-${from}-to-${to}.csv`;
}
