import { queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { apiJson } from "../api/core";
import { object } from "../api/read";
import type { UsageRates, UsageReport } from "../usage/report";

// Usage and cost in the browser (issue 22): the report for a range of UTC days (GET /api/usage,
// shape in lib/usage/report.ts) and the team's rate card (GET/PATCH /api/usage/rates).

export interface UsageRange {
  /** First and last UTC day, `YYYY-MM-DD`, both included; omit both for this UTC month. */
  from?: string;
  to?: string;
}

/** The rate card as GET/PATCH /api/usage/rates answer it. */
export interface UsageRatesView extends UsageRates {
  /** The seed's prices, the default. */
  seed: UsageRates;
  updated_at: string | null;
  /** User id of who changed it last. */
  updated_by: string | null;
}

export const usageKeys = {
  all: ["usage"] as const,
  report: (range: UsageRange) => ["usage", "report", range.from ?? "", range.to ?? ""] as const,
  rates: () => ["usage", "rates"] as const,
};

const readReport = object<UsageReport>({
  currency: "string",
  from: "string",
  to: "string",
  scope: "string",
  totals: "object",
  team_totals: "object",
  days: "array",
  members: "array",
  sandboxes: "array",
  month: "object",
  rates: "object",
});
const readRates = object<UsageRatesView>({
  vcpu_hour_micro: "number",
  gib_hour_micro: "number",
  storage_gb_month_micro: "number",
  free_storage_gb: "number",
  seed: "object",
});

export const usageQueries = {
  report: (range: UsageRange = {}) =>
    queryOptions({
      queryKey: usageKeys.report(range),
      queryFn: ({ signal }) =>
        apiJson({ path: "/api/usage", query: { from: range.from, to: range.to }, signal }, readReport),
    }),
  rates: () =>
    queryOptions({
      queryKey: usageKeys.rates(),
      queryFn: ({ signal }) => apiJson({ path: "/api/usage/rates", signal }, readRates),
    }),
};

/** A change of some rates (whole micro-euros; free storage in whole GB). */
export type UsageRatesChange = Partial<UsageRates>;

export function updateUsageRates(change: UsageRatesChange): Promise<UsageRatesView> {
  return apiJson({ method: "PATCH", path: "/api/usage/rates", body: change }, readRates);
}

/** PATCH /api/usage/rates; the rates and every report (their costs) are read again after it. */
export function useUpdateUsageRates() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: updateUsageRates,
    onSuccess: (rates) => {
      qc.setQueryData(usageKeys.rates(), rates);
      void qc.invalidateQueries({ queryKey: usageKeys.all });
    },
  });
}
