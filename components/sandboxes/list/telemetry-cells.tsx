"use client";

import { createContext, useCallback, useContext, useSyncExternalStore } from "react";
import { formatEur } from "../../../lib/format";
import { computeCostEur } from "../../../lib/pricing";
import { useUsageRates } from "../../usage/rates-context";
import { IDLE_RULE_TEXT, IDLE_WINDOW_MS, isIdle } from "./idle";
import type { RowTelemetry, TelemetryStore } from "./row-telemetry";
import { Sparkline } from "./sparkline";
import { useNow } from "../../../lib/use-now";

export const TelemetryContext = createContext<TelemetryStore | null>(null);

/** One row's telemetry; re-renders only that row's cells when its reading changes. */
function useRowTelemetry(id: string): RowTelemetry | null {
  const store = useContext(TelemetryContext);
  const subscribe = useCallback((cb: () => void) => (store ? store.subscribe(id, cb) : () => {}), [store, id]);
  return useSyncExternalStore(
    subscribe,
    () => store?.get(id) ?? null,
    () => null,
  );
}

const pct = (v: number | null) => (v === null ? "—" : `${v < 10 ? v.toFixed(1) : Math.round(v)}%`);

/** Live CPU and memory of a row: a sparkline of the last minutes and the latest values. */
export function UsageCell({ id, status }: { id: string; status: string }) {
  const t = useRowTelemetry(id);
  const now = useNow();
  if (!t || now === null) return <span className="text-xs text-muted-foreground">…</span>;
  if (t.error && t.samples.length === 0)
    return (
      <span className="text-xs text-muted-foreground" title={t.error}>
        unavailable
      </span>
    );
  if (status !== "running") return <span className="text-xs text-muted-foreground">not running</span>;
  const minutes = Math.round(IDLE_WINDOW_MS / 60_000);
  const label = `CPU ${pct(t.cpuPercent)}, memory ${pct(t.memPercent)} of limit; last ${minutes} minutes`;
  return (
    <div className="flex items-center gap-2">
      <Sparkline samples={t.samples} windowMs={IDLE_WINDOW_MS} now={now} label={label} />
      <span aria-hidden="true" className="flex flex-col text-[11px] leading-tight tabular-nums">
        <span className="flex items-center gap-1">
          <span className="size-1.5 rounded-full bg-primary" />
          {pct(t.cpuPercent)}
        </span>
        <span className="flex items-center gap-1">
          <span className="size-1.5 rounded-full bg-success" />
          {pct(t.memPercent)}
        </span>
      </span>
    </div>
  );
}

/** Cost so far from the lifetime totals, at the team's rate card (an estimate, as on /usage). */
export function CostCell({ id }: { id: string }) {
  const t = useRowTelemetry(id);
  const rates = useUsageRates();
  if (!t) return <span className="text-muted-foreground">…</span>;
  if ((t.cpuSeconds === null && t.gbSeconds === null) || !rates)
    return (
      <span className="text-muted-foreground" title={t.error ?? (rates ? undefined : "No access to the rate card")}>
        —
      </span>
    );
  return <span className="tabular-nums">{formatEur(computeCostEur(t.cpuSeconds ?? 0, t.gbSeconds ?? 0, rates))}</span>;
}

/** The idle flag, with the rule as its tooltip and accessible description. */
export function IdleFlag({ id, status }: { id: string; status: string }) {
  const t = useRowTelemetry(id);
  const now = useNow();
  if (!t || now === null || !isIdle({ status, samples: t.samples, lastExecAt: t.lastExecAt, now })) return null;
  return (
    <span
      title={IDLE_RULE_TEXT}
      className="inline-flex items-center rounded-md border border-warning px-1.5 py-0.5 text-[11px] font-medium text-foreground"
    >
      idle<span className="sr-only">: {IDLE_RULE_TEXT}</span>
    </span>
  );
}
