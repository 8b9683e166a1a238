import "server-only";
import { z } from "zod";
import { parseAuditQuery, type AuditFilter } from "../../audit-query";
import { AppError } from "../errors";
import { RETENTION_LIMITS } from "./stream";

// The audit API's inputs. The filter arrives as URL parameters (what the page's controls and its
// URL hold) and/or `q`, the query box in Coder's syntax (lib/audit-query.ts); both name the same
// filter, and a field given both ways must agree.

const value = z.string().trim().max(300).optional();

export const AuditFilterQuery = z.object({
  q: z.string().max(2000).optional(),
  actor: value,
  action: value,
  target_type: value,
  target_id: value,
  result: value,
  date_from: value,
  date_to: value,
});

export const AuditListQuery = AuditFilterQuery.extend({
  cursor: z.string().max(200).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

export const AuditExportQuery = AuditFilterQuery.extend({
  format: z.enum(["csv", "jsonl"]).default("csv"),
});

/** The one filter the parameters and `q` give, or a 422 that says what is wrong. */
export function filterOf(query: z.output<typeof AuditFilterQuery>): AuditFilter {
  const fromParams: AuditFilter = {
    actor: query.actor || undefined,
    action: query.action || undefined,
    targetType: query.target_type || undefined,
    targetId: query.target_id || undefined,
    result: query.result || undefined,
    dateFrom: query.date_from || undefined,
    dateTo: query.date_to || undefined,
  };
  let filter: AuditFilter = {};
  if (query.q && query.q.trim()) {
    const parsed = parseAuditQuery(query.q);
    if (!parsed.ok) throw new AppError("validation_error", parsed.error, { errors: { q: parsed.error } });
    filter = parsed.filter;
  }
  for (const [k, v] of Object.entries(fromParams) as [keyof AuditFilter, string | undefined][]) {
    if (v === undefined) continue;
    if (filter[k] !== undefined && filter[k] !== v)
      throw new AppError("validation_error", `The query and the ${k} filter disagree; give it once.`);
    filter[k] = v;
  }
  return filter;
}

export const AuditSettingsBody = z
  .object({
    retention_days: z.number().int().min(RETENTION_LIMITS.min).max(RETENTION_LIMITS.max).optional(),
    siem_url: z.string().max(2048).nullable().optional(),
    siem_enabled: z.boolean().optional(),
    rotate_secret: z.literal(true).optional(),
  })
  .strict();
