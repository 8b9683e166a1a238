import { z } from "zod";
import { newId } from "../lib/ids.js";

/**
 * Faults on demand, for testing clients (the console) against a misbehaving but real engine:
 * latency, 5xx errors, connection resets and 503 fleet_full with Retry-After, on chosen routes.
 */
export const FaultRule = z.object({
  kind: z.enum(["latency", "error", "reset", "fleet_full"]),
  /** Regular expression matched against the path (without the query). */
  path: z.string().min(1).max(500).default("^/v1/"),
  method: z.string().toUpperCase().optional(),
  latency_ms: z.number().int().min(0).max(120_000).default(0),
  status: z.number().int().min(500).max(599).default(500),
  retry_after_seconds: z.number().int().min(0).max(3600).default(2),
  /** How many matching requests it applies to; omitted = until removed. */
  count: z.number().int().min(1).max(1_000_000).optional(),
});
export type FaultRuleInput = z.infer<typeof FaultRule>;

export interface Fault extends FaultRuleInput {
  id: string;
  hits: number;
  regex: RegExp;
}

export class Faults {
  private rules: Fault[] = [];

  add(input: FaultRuleInput): Fault {
    let regex: RegExp;
    try {
      regex = new RegExp(input.path);
    } catch (e) {
      throw new Error(`invalid path regex: ${(e as Error).message}`);
    }
    const f: Fault = { ...input, id: newId("evt").replace("evt_", "flt_"), hits: 0, regex };
    this.rules.push(f);
    return f;
  }

  list(): Omit<Fault, "regex">[] {
    return this.rules.map(({ regex: _r, ...rest }) => rest);
  }

  remove(id?: string): void {
    this.rules = id ? this.rules.filter((r) => r.id !== id) : [];
  }

  /** The rule that applies to this request, if any; counts the hit. */
  match(method: string, path: string): Fault | null {
    const rule = this.rules.find((r) => (!r.method || r.method === method) && r.regex.test(path));
    if (!rule) return null;
    rule.hits++;
    if (rule.count !== undefined && rule.hits >= rule.count) this.rules = this.rules.filter((r) => r !== rule);
    return rule;
  }
}
