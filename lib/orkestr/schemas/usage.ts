import { z } from "zod";
import { Num, Timestamp } from "./common";

const Amounts = {
  cpu_seconds: Num.nullish(),
  gb_seconds: Num.nullish(),
  sandboxes_created: Num.nullish(),
  cost_eur: Num.nullish(),
};

export const UsageSeriesPoint = z.object({ date: Timestamp.nullish(), ...Amounts }).loose();
export type UsageSeriesPoint = z.infer<typeof UsageSeriesPoint>;

export const UsageBySandbox = z.object({ id: z.string(), ...Amounts }).loose();
export type UsageBySandbox = z.infer<typeof UsageBySandbox>;

/** GET /v1/sandboxes/usage (alias /v1/usage): nothing about it is known, so all optional. */
export const Usage = z
  .object({
    currency: z.string().nullish(),
    from: Timestamp.nullish(),
    to: Timestamp.nullish(),
    totals: z.object(Amounts).loose().nullish(),
    trial_credit_eur: Num.nullish(),
    trial_credit_used_eur: Num.nullish(),
    series: z.array(UsageSeriesPoint).nullish(),
    by_sandbox: z.array(UsageBySandbox).nullish(),
  })
  .loose();
export type Usage = z.infer<typeof Usage>;

export const UsageQuery = z.object({
  from: z.string().optional(),
  to: z.string().optional(),
  granularity: z.enum(["hour", "day", "month"]).optional(),
  sandbox_id: z.string().optional(),
});
export type UsageQuery = z.input<typeof UsageQuery>;
