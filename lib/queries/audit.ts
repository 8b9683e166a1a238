import { infiniteQueryOptions, queryOptions } from "@tanstack/react-query";
import { apiJson, apiPage } from "../api/core";
import { object } from "../api/read";
import { auditFilterToParams, type AuditFilter } from "../audit-query";
import { buildQuery } from "../orkestr/path";

// The audit log in the browser: the filtered list (GET /api/audit, keyset pages), the export's
// download address (a navigation, not a fetch: the browser saves the stream), and the team's
// retention and SIEM settings (GET/PATCH /api/audit/settings).

export interface AuditEventRow {
  id: string;
  created_at: string;
  team_id: string | null;
  actor_id: string | null;
  actor_email: string | null;
  credential: string | null;
  action: string;
  target: string | null;
  target_type: string | null;
  target_id: string | null;
  result: string;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  data: unknown;
}

export interface AuditSettingsView {
  retention_days: number;
  siem_url: string | null;
  siem_enabled: boolean;
  siem_secret_set: boolean;
}

export interface AuditStreamStatus {
  pending: number;
  given_up: number;
  last_error: string | null;
}

export interface AuditSettingsAnswer {
  settings: AuditSettingsView;
  stream: AuditStreamStatus;
  /** Only in the answer to the change that made it: shown once. */
  siem_secret?: string | null;
}

export const AUDIT_PAGE_SIZE = 50;

export const auditKeys = {
  all: ["audit"] as const,
  list: (filter: AuditFilter) => ["audit", "list", auditFilterToParams(filter)] as const,
  settings: () => ["audit", "settings"] as const,
};

const readEvent = object<AuditEventRow>({ id: "string", created_at: "string", action: "string", result: "string" });
const readSettings = object<AuditSettingsAnswer>({ settings: "object", stream: "object" });

export const auditQueries = {
  list: (filter: AuditFilter) =>
    infiniteQueryOptions({
      queryKey: auditKeys.list(filter),
      queryFn: ({ pageParam, signal }) =>
        apiPage(
          {
            path: "/api/audit",
            query: { ...auditFilterToParams(filter), cursor: pageParam ?? undefined, limit: AUDIT_PAGE_SIZE },
            signal,
          },
          readEvent,
        ),
      initialPageParam: null as string | null,
      getNextPageParam: (last) => last.nextCursor,
    }),
  settings: () =>
    queryOptions({
      queryKey: auditKeys.settings(),
      queryFn: ({ signal }) => apiJson({ path: "/api/audit/settings", signal }, readSettings),
    }),
};

/** Where the export of exactly this filter downloads from. */
export function auditExportHref(filter: AuditFilter, format: "csv" | "jsonl"): string {
  return `/api/audit/export${buildQuery({ format, ...auditFilterToParams(filter) })}`;
}

export interface AuditSettingsChange {
  retention_days?: number;
  siem_url?: string | null;
  siem_enabled?: boolean;
  rotate_secret?: true;
}

export function updateAuditSettings(change: AuditSettingsChange): Promise<AuditSettingsAnswer> {
  return apiJson({ method: "PATCH", path: "/api/audit/settings", body: change }, readSettings);
}
