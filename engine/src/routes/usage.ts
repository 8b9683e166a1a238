import type { FastifyRequest } from "fastify";
import { z } from "zod";
import { accountOf } from "../auth.js";
import { ApiError } from "../errors.js";
import { UsageReport } from "../responses.js";
import { utcDate } from "../services/usage.js";
import type { ResourcePlugin } from "./plugin.js";

/** The longest window one report covers (a year, leap day included): the series is one entry per day. */
const MAX_DAYS = 366;
const DEFAULT_DAYS = 30;
const DAY_MS = 86_400_000;

/**
 * A day as `YYYY-MM-DD`, or an RFC 3339 time / unix seconds whose UTC date is taken (reports are
 * per UTC day). Impossible dates such as 2025-02-30 are refused, not rolled over.
 */
const Day = z
  .string()
  .max(64)
  .describe("A UTC day: YYYY-MM-DD, or an RFC 3339 time or unix seconds whose UTC date is taken")
  .transform((s, ctx) => {
    let ms = Number.NaN;
    if (/^\d{4}-\d{2}-\d{2}$/.test(s)) {
      ms = Date.parse(`${s}T00:00:00Z`);
      if (!Number.isNaN(ms) && utcDate(ms) !== s) ms = Number.NaN;
    } else if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(s)) ms = Date.parse(s);
    else if (/^\d{1,12}(\.\d+)?$/.test(s)) ms = Number(s) * 1000;
    if (Number.isNaN(ms)) {
      ctx.addIssue({ code: "custom", message: "must be a date (YYYY-MM-DD), an RFC 3339 time or unix seconds" });
      return z.NEVER;
    }
    return utcDate(ms);
  });

const UsageQuery = z.object({
  from: Day.optional(),
  to: Day.optional(),
  granularity: z.enum(["day"]).default("day"),
  sandbox_id: z
    .union([z.string().max(4096), z.array(z.string().max(4096)).max(50)])
    .optional()
    .describe("Comma list (or repeated) of sandbox ids, at most 50"),
});

const invalid = (field: string, msg: string) =>
  new ApiError("validation_error", [{ loc: ["query", field], msg, type: "value_error" }]);

/** Metered usage per UTC day (GET /v1/sandboxes/usage), from the same ledger that draws down the trial credit. */
export const usageRoutes: ResourcePlugin = async (app, { ctx }) => {
  // Both routes validate the query with UsageQuery (below).
  const report = async (req: FastifyRequest) => {
    const account = accountOf(req);
    const q = req.query as z.infer<typeof UsageQuery>;
    const today = utcDate(Date.now());
    const to = q.to ?? (q.from && q.from > today ? q.from : today);
    const from = q.from ?? utcDate(Date.parse(`${to}T00:00:00Z`) - (DEFAULT_DAYS - 1) * DAY_MS);
    if (from > to) throw invalid("from", `from (${from}) is after to (${to})`);
    const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS + 1;
    if (days > MAX_DAYS) throw invalid("to", `a report covers at most ${MAX_DAYS} days; this asks for ${days}`);

    const requested = [q.sandbox_id ?? []]
      .flat()
      .flatMap((s) => s.split(","))
      .map((s) => s.trim())
      .filter(Boolean);
    if (requested.length > 50) throw invalid("sandbox_id", "at most 50 sandbox ids");
    // Ids are matched case-insensitively like everywhere else; unknown ones are 404, not an empty report.
    const sandboxIds = requested.length
      ? [...new Set(requested.map((id) => ctx.sandboxes.getRow(account, id).id))]
      : undefined;

    const r = ctx.usage.report(account, from, to, sandboxIds);
    const plan = ctx.sandboxes.plan;
    return {
      currency: r.currency,
      from: r.from,
      to: r.to,
      granularity: r.granularity,
      totals: r.totals,
      // The same figure as GET /v1/sandboxes/limits, from the same accounting: the credit is account-wide.
      trial_credit_eur: plan.trialCreditEur,
      trial_credit_used_eur: Math.round(ctx.sandboxes.creditUsedEur(account) * 1e6) / 1e6,
      series: r.series,
      by_sandbox: r.by_sandbox,
      prices: r.prices,
    };
  };
  const schema = { tags: ["usage"], querystring: UsageQuery, response: { 200: UsageReport } };
  app.get(
    "/sandboxes/usage",
    { schema: { ...schema, summary: "Metered usage per UTC day: totals, series, per sandbox (default: 30 days)" } },
    report,
  );
  app.get("/usage", { schema: { ...schema, summary: "Alias of GET /v1/sandboxes/usage" } }, report);
};
