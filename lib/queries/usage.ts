import { queryOptions } from "@tanstack/react-query";
import { apiJson } from "../api/core";
import { object } from "../api/read";
import type { UsageRates, UsageReport } from "../usage/report";

// Usage and cost in the browser (issue 22): the report of a UTC day range (GET /api/usage) and the
// team's rate card (GET/PATCH /api/usage/rates). Shapes in lib/usage/report.ts; money is whole µ€.

export const usageKeys = {
  all: ["usage"] as const,
  report: (range: { from: string; to: string }) => ["usage", "report", range.from, range.to] as const,
  rates: () => ["usage", "rates"] as const,
};

const readReport = object<UsageReport>({
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
const readRates = object<UsageRates>({
  vcpu_hour_micro: "number",
  gib_hour_micro: "number",
  storage_gb_month_micro: "number",
  free_storage_gb: "number",
});

export const usageQueries = {
  report: (range: { from: string; to: string }) =>
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

/** Changes the team's rate card (billing.manage); answers the card as saved. */
export function updateUsageRates(change: Partial<UsageRates>): Promise<UsageRates> {
  return apiJson({ method: "PATCH", path: "/api/usage/rates", body: change }, readRates);
}
