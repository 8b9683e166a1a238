import { z } from "zod";

// What GET /api/usage and PATCH /api/usage/rates accept (issue 22).

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const MAX_RANGE_DAYS = 366;

const UtcDay = z
  .string()
  .regex(DAY, "must be a date as YYYY-MM-DD")
  .refine((d) => {
    const t = Date.parse(`${d}T00:00:00Z`);
    return Number.isFinite(t) && new Date(t).toISOString().slice(0, 10) === d;
  }, "is not a real date");

const dayMs = (d: string) => Date.parse(`${d}T00:00:00Z`);

/** `?from=&to=`: UTC days, both included; default this UTC month (from the 1st to its last day). */
export const UsageReportQuery = z
  .object({ from: UtcDay.optional(), to: UtcDay.optional() })
  .transform((q) => {
    // A missing end is the last day of the other end's month (this month without either).
    const monthOf = (d: string | undefined) => {
      const t = d ? new Date(dayMs(d)) : new Date();
      return {
        first: new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), 1)).toISOString().slice(0, 10),
        last: new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth() + 1, 0)).toISOString().slice(0, 10),
      };
    };
    const from = q.from ?? monthOf(q.to).first;
    const to = q.to ?? monthOf(q.from).last;
    return { from, to };
  })
  .superRefine((q, ctx) => {
    if (dayMs(q.from) > dayMs(q.to)) ctx.addIssue({ code: "custom", path: ["from"], message: "must not be after to" });
    else if ((dayMs(q.to) - dayMs(q.from)) / 86_400_000 + 1 > MAX_RANGE_DAYS)
      ctx.addIssue({ code: "custom", path: ["to"], message: `the range may span at most ${MAX_RANGE_DAYS} days` });
  });
export type UsageReportQuery = z.infer<typeof UsageReportQuery>;

/** Whole micro-euros per unit: non-negative integers, with maxima no real price comes near. */
const Micro = (max: number) => z.number().int("must be a whole number of micro-euros").min(0).max(max);

export const UsageRatesBody = z
  .object({
    /** µ€ per vCPU-hour: at most EUR 100 per vCPU-hour. */
    vcpu_hour_micro: Micro(100_000_000).optional(),
    /** µ€ per GiB-hour: at most EUR 100 per GiB-hour. */
    gib_hour_micro: Micro(100_000_000).optional(),
    /** µ€ per GB-month: at most EUR 1,000 per GB-month. */
    storage_gb_month_micro: Micro(1_000_000_000).optional(),
    /** GB free: at most 1,000,000 GB (1 PB). */
    free_storage_gb: z.number().int("must be a whole number of GB").min(0).max(1_000_000).optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: "give at least one rate to change" });
export type UsageRatesBody = z.infer<typeof UsageRatesBody>;
