// What the Limits page shows, from one GET /v1/sandboxes/limits answer: each used/cap pair as a
// gauge with the exact figures, what happens at the cap and what to do, and each size with why it
// is or is not available. Pure (no React, no zod), so it is unit-tested and costs the page nothing.
// Every number comes from the answer; a figure the server does not report stays unknown.

import type { Limits } from "../../lib/orkestr/schemas/limits";
import { formatEur, formatGibibytes, formatMebibytes } from "../../lib/format";

export type GaugeState = "ok" | "near" | "full" | "unknown" | "uncapped";

export interface Gauge {
  /** Names the gauge in test ids: ram, paused, snapshots, volumes, templates, credit, host-ram. */
  id: string;
  label: string;
  /** As reported; null: the server does not say. */
  used: number | null;
  cap: number | null;
  /** The figures as text, in lib/format.ts's units ("1.5 GiB", "3", "€0.000003"). */
  usedText: string;
  capText: string;
  state: GaugeState;
  /** Words for the state where the generic ones would mislead (a credit past which usage is billed). */
  stateLabel?: string;
  /** What the API does when the cap is reached. */
  atCap: string;
  /** What the user can do about it. */
  remedy: string;
  /** The page where the remedy is done. */
  link: { href: string; label: string } | null;
  /** A fact that changes the reading (the machine holds less than the plan allows). */
  note: string | null;
}

/** At or past this share of the cap a gauge warns ("nearly full"). */
export const NEAR_SHARE = 0.8;

const integer = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

/** 32768 → "32,768": exact, grouped (counts; sizes and money go through lib/format.ts). */
export function formatCount(n: number): string {
  return integer.format(n);
}

export function gaugeState(used: number | null, cap: number | null): GaugeState {
  if (cap === null) return "uncapped";
  if (used === null) return "unknown";
  if (used >= cap) return "full";
  return cap > 0 && used / cap >= NEAR_SHARE ? "near" : "ok";
}

/** used / cap as 0–100 for a bar's width (clamped: an over-committed figure fills the bar, no more). */
export function gaugePercent(g: Pick<Gauge, "used" | "cap">): number {
  if (g.used === null || g.cap === null) return 0;
  if (g.cap <= 0) return g.used > 0 ? 100 : 0;
  return Math.min(100, Math.max(0, (g.used / g.cap) * 100));
}

const num = (v: number | null | undefined): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function planName(l: Limits): string {
  return l.plan ? `the ${l.plan} plan` : "your plan";
}

function countGauge(
  id: Gauge["id"],
  label: string,
  used: number | null,
  cap: number | null,
  rest: Pick<Gauge, "atCap" | "remedy" | "link">,
): Gauge {
  return {
    id,
    label,
    used,
    cap,
    usedText: used === null ? "not reported" : formatCount(used),
    capText: cap === null ? "no cap reported" : formatCount(cap),
    state: gaugeState(used, cap),
    note: null,
    ...rest,
  };
}

/** The RAM budget: live sandboxes' memory against the plan's budget, and the machine's clamp on it. */
function ramGauge(l: Limits): Gauge {
  const used = num(l.ram_used_mb);
  const cap = num(l.ram_budget_mb);
  const effective = num(l.effective_ram_budget_mb);
  const running = num(l.running);
  return {
    id: "ram",
    label: "RAM budget (live sandboxes)",
    used,
    cap,
    usedText: used === null ? "not reported" : formatMebibytes(used),
    capText: cap === null ? "no cap reported" : formatMebibytes(cap),
    state: gaugeState(used, cap),
    atCap: `A create or resume that would go past the budget answers 429 concurrency_limit.${
      running !== null ? ` ${formatCount(running)} running now; paused sandboxes do not count.` : ""
    }`,
    remedy: "Pause or terminate a running sandbox to free its memory, or pick a smaller size.",
    link: { href: "/sandboxes?status=running", label: "Running sandboxes" },
    note:
      effective !== null && cap !== null && effective < cap
        ? `This machine can hold ${formatMebibytes(effective)} of the budget now (its own RAM, shared with every account): past that a create answers 503 fleet_full, which is the machine, not your plan.`
        : null,
  };
}

function creditGauge(l: Limits): Gauge {
  const used = num(l.trial_credit_used_eur);
  const total = num(l.trial_credit_eur);
  // A plan without a trial credit (0 or none) has no cap to show: usage is billed from the start.
  const cap = total !== null && total > 0 ? total : null;
  const hard = l.trial_is_hard_limit;
  const state = gaugeState(used, cap);
  return {
    id: "credit",
    label: "Trial credit",
    used,
    cap,
    usedText: used === null ? "not reported" : formatEur(used),
    capText: cap === null ? "no trial credit" : formatEur(cap),
    state,
    stateLabel:
      state === "uncapped" ? "No trial credit" : state === "full" && hard === false ? "Used up: billed" : undefined,
    atCap:
      hard === true
        ? "Once it is used up, creates answer 402 trial_exhausted; sandboxes already running keep running. The credit is one-time and does not reset."
        : hard === false
          ? "Past the credit, usage is billed at the pay-as-you-go rates; creates keep working. The credit is one-time and does not reset."
          : "The credit is one-time and does not reset; what happens past it depends on the plan.",
    remedy:
      hard === true
        ? "Terminate sandboxes you no longer need (idle ones draw little), or move to a paid plan."
        : "Terminate sandboxes you no longer need: metering counts on-CPU seconds and working-set memory.",
    link: null,
    note: null,
  };
}

/** Every used/cap pair the answer reports, in the order the page shows them. */
export function gauges(l: Limits): Gauge[] {
  const plan = planName(l);
  return [
    ramGauge(l),
    countGauge("paused", "Paused sandboxes", num(l.paused), num(l.max_paused), {
      atCap: `A pause answers 409 snapshot_cap_reached, and a countdown set to pause terminates the sandbox instead (${plan}).`,
      remedy: "Resume or terminate a paused sandbox.",
      link: { href: "/sandboxes?status=paused", label: "Paused sandboxes" },
    }),
    countGauge("snapshots", "Named snapshots", num(l.named_snapshots), num(l.max_named_snapshots), {
      atCap: "Taking another snapshot answers 409 snapshot_cap_reached.",
      remedy: "Delete a snapshot you no longer fork from.",
      link: { href: "/snapshots", label: "Snapshots" },
    }),
    countGauge("volumes", "Volumes", num(l.volumes), num(l.max_volumes), {
      atCap: `Creating another volume answers 403 plan_limit${
        num(l.max_volume_gb) !== null ? `; each volume may be at most ${formatGibibytes(num(l.max_volume_gb))}` : ""
      }.`,
      remedy: "Delete a volume that no sandbox needs (a volume is refused while attached).",
      link: { href: "/volumes", label: "Volumes" },
    }),
    countGauge("templates", "Templates", num(l.templates), num(l.max_templates), {
      atCap: "Creating another template answers 403 template_cap_reached.",
      remedy: "Delete a custom template no sandbox is created from any more.",
      link: { href: "/templates", label: "Templates" },
    }),
    creditGauge(l),
  ];
}

export interface SizeRow {
  size: string;
  cpu: number | null;
  memoryMb: number | null;
  /** "available": the plan offers it and the machine can hold one. */
  status: "available" | "not-on-plan" | "too-big-for-host";
  /** The server's reason, or one built from `allowed` / `allowed_sizes` when a server sends none. */
  reason: string;
}

/** The size menu as the answer gives it, each with its availability and why. */
export function sizeRows(l: Limits): SizeRow[] {
  const allowedList = l.allowed_sizes ?? null;
  const fromSizes = (l.sizes ?? []).map((s) => s.size);
  // A server that sends only allowed_sizes still gets a menu (of what it allows).
  const names = fromSizes.length ? fromSizes : (allowedList ?? []);
  return names.map((name) => {
    const s = l.sizes?.find((x) => x.size === name);
    const allowed = s?.allowed ?? (allowedList ? allowedList.includes(name) : true);
    const status: SizeRow["status"] = !allowed
      ? "not-on-plan"
      : s?.fits_host === false
        ? "too-big-for-host"
        : "available";
    let reason = s?.reason ?? null;
    if (!reason && status === "not-on-plan")
      reason = `Not offered on ${planName(l)}${allowedList?.length ? ` (it offers ${allowedList.join(", ")})` : ""}.`;
    if (!reason && status === "available")
      reason =
        s?.fits_host === true
          ? `${capitalize(planName(l))} offers it and this machine can hold one.`
          : `${capitalize(planName(l))} offers it.`;
    return { size: name, cpu: num(s?.cpu), memoryMb: num(s?.memory_mb), status, reason: reason ?? "" };
  });
}

/** Whether the answer comes from Baton's local engine (it has an isolation report and a host clamp). */
export function isLocalEngine(l: Limits): boolean {
  return l.engine?.kind === "local" || !!l.isolation || !!l.host_capacity;
}
