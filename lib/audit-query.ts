// The audit log's filter, in its three spellings, for the browser and the server alike:
// - the filter object (what the page's controls hold and the server's query takes);
// - the query box, in Coder's syntax: `action:sandbox.terminate actor:ana@example.test
//   resource_type:sandbox resource_id:sbx_1 result:forbidden date_from:2026-01-01 date_to:2026-01-31`
//   (values with spaces in double quotes; `email:` and `username:` are actor's other names);
// - the URL's query string (`?action=…&actor=…`), so a filtered view can be linked.
// parseAuditQuery(formatAuditQuery(f)) gives f back, so the box and the controls stay in sync.

export interface AuditFilter {
  /** An email (matched case-insensitively) or a user id (`usr_…`). */
  actor?: string;
  /** Exact action, e.g. "sandbox.terminate". */
  action?: string;
  targetType?: string;
  targetId?: string;
  /** "ok", or a refusal's code ("forbidden", "not_found", "invalid_credentials"…). */
  result?: string;
  /** First day included, YYYY-MM-DD (UTC). */
  dateFrom?: string;
  /** Last day included, YYYY-MM-DD (UTC). */
  dateTo?: string;
}

export const AUDIT_FILTER_KEYS = ["actor", "action", "targetType", "targetId", "result", "dateFrom", "dateTo"] as const;
export type AuditFilterKey = (typeof AUDIT_FILTER_KEYS)[number];

/** Query-box key → filter field. The first key of each field is the one formatAuditQuery() writes. */
const QUERY_KEYS: Record<string, AuditFilterKey> = {
  action: "action",
  actor: "actor",
  email: "actor",
  username: "actor",
  resource_type: "targetType",
  resource_id: "targetId",
  result: "result",
  date_from: "dateFrom",
  date_to: "dateTo",
};
const WRITTEN_KEY: Record<AuditFilterKey, string> = {
  action: "action",
  actor: "actor",
  targetType: "resource_type",
  targetId: "resource_id",
  result: "result",
  dateFrom: "date_from",
  dateTo: "date_to",
};
/** URL parameter per field. */
export const URL_PARAM: Record<AuditFilterKey, string> = {
  actor: "actor",
  action: "action",
  targetType: "target_type",
  targetId: "target_id",
  result: "result",
  dateFrom: "date_from",
  dateTo: "date_to",
};

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const ACTION = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;
const MAX_VALUE = 300;

export type AuditQueryResult = { ok: true; filter: AuditFilter } | { ok: false; error: string };

function validDate(s: string): boolean {
  if (!DATE.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !isNaN(d.getTime()) && d.toISOString().startsWith(s);
}

/** Why a filter cannot be run (a bad date, an action that is not resource.verb…), or null. */
export function auditFilterProblem(filter: AuditFilter): string | null {
  for (const key of AUDIT_FILTER_KEYS) {
    const v = filter[key];
    if (v !== undefined && v.length > MAX_VALUE)
      return `${WRITTEN_KEY[key]} is too long (at most ${MAX_VALUE} characters).`;
  }
  if (filter.action !== undefined && !ACTION.test(filter.action))
    return `action:${filter.action} is not an action: actions look like resource.verb, e.g. sandbox.terminate.`;
  for (const key of ["dateFrom", "dateTo"] as const) {
    const v = filter[key];
    if (v !== undefined && !validDate(v)) return `${WRITTEN_KEY[key]}:${v} is not a date: write it as YYYY-MM-DD.`;
  }
  if (filter.dateFrom && filter.dateTo && filter.dateFrom > filter.dateTo)
    return `date_from (${filter.dateFrom}) is after date_to (${filter.dateTo}).`;
  return null;
}

/** Splits the box into tokens: `key:value` or `key:"value with spaces"`, separated by spaces. */
function tokens(input: string): { tokens: string[]; error?: string } {
  const out: string[] = [];
  let i = 0;
  while (i < input.length) {
    while (i < input.length && /\s/.test(input[i]!)) i++;
    if (i >= input.length) break;
    let token = "";
    while (i < input.length && !/\s/.test(input[i]!)) {
      if (input[i] === '"') {
        const end = input.indexOf('"', i + 1);
        if (end < 0) return { tokens: out, error: 'A quoted value is not closed: add the closing ".' };
        token += input.slice(i + 1, end);
        i = end + 1;
      } else {
        token += input[i];
        i++;
      }
    }
    out.push(token);
  }
  return { tokens: out };
}

/** The query box → the filter, or an error that says what is wrong and what is accepted. */
export function parseAuditQuery(input: string): AuditQueryResult {
  const split = tokens(input);
  if (split.error) return { ok: false, error: split.error };
  const filter: AuditFilter = {};
  const keys = Object.keys(QUERY_KEYS).join(", ");
  for (const token of split.tokens) {
    const colon = token.indexOf(":");
    if (colon <= 0)
      return {
        ok: false,
        error: `"${token}" is not a filter: write key:value (keys: ${keys}), e.g. action:sandbox.terminate.`,
      };
    const key = token.slice(0, colon).toLowerCase();
    const value = token.slice(colon + 1);
    const field = QUERY_KEYS[key];
    if (!field) return { ok: false, error: `Unknown filter "${key}": the keys are ${keys}.` };
    if (value === "") return { ok: false, error: `${key}: has no value.` };
    if (filter[field] !== undefined && filter[field] !== value)
      return { ok: false, error: `${key} is given twice; give each filter once.` };
    filter[field] = value;
  }
  const problem = auditFilterProblem(filter);
  return problem ? { ok: false, error: problem } : { ok: true, filter };
}

function quote(value: string): string {
  return /[\s"]/.test(value) ? `"${value.replace(/"/g, "")}"` : value;
}

/** The filter → the query box's text (the same filter parses back). */
export function formatAuditQuery(filter: AuditFilter): string {
  return AUDIT_FILTER_KEYS.filter((k) => filter[k] !== undefined && filter[k] !== "")
    .map((k) => `${WRITTEN_KEY[k]}:${quote(filter[k]!)}`)
    .join(" ");
}

/** Drops empty fields (a cleared control). */
export function cleanAuditFilter(filter: AuditFilter): AuditFilter {
  const out: AuditFilter = {};
  for (const k of AUDIT_FILTER_KEYS) {
    const v = filter[k]?.trim();
    if (v) out[k] = v;
  }
  return out;
}

/** The filter from a URL's query (unknown parameters ignored). */
export function auditFilterFromParams(params: URLSearchParams): AuditFilter {
  const out: AuditFilter = {};
  for (const k of AUDIT_FILTER_KEYS) {
    const v = params.get(URL_PARAM[k]);
    if (v) out[k] = v;
  }
  return out;
}

/** The filter as URL query parameters. */
export function auditFilterToParams(filter: AuditFilter): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of AUDIT_FILTER_KEYS) {
    const v = filter[k];
    if (v) out[URL_PARAM[k]] = v;
  }
  return out;
}

/** The time range a filter's dates cover, as epoch ms [from, to): whole UTC days. */
export function auditDateRange(filter: AuditFilter): { from?: number; to?: number } {
  const day = 24 * 60 * 60_000;
  return {
    from: filter.dateFrom ? Date.parse(`${filter.dateFrom}T00:00:00Z`) : undefined,
    to: filter.dateTo ? Date.parse(`${filter.dateTo}T00:00:00Z`) + day : undefined,
  };
}
