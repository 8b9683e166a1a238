// A token's own limits as typed in Settings → API tokens: a monthly spend cap in EUR (whole cents,
// converted from the text itself, never through a float) and a maximum of concurrent sandboxes.
// Empty means no limit. Pure and client-safe; the server checks the same bounds (lib/validations/api-tokens.ts).

import { formatMicro } from "../usage/caps";
import { parseEurToMicro } from "../usage/rates-form";
import { TOKEN_CAP_MICRO, TOKEN_CONCURRENCY } from "./scope";

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** "5" or "12.50" → whole micro-euros; "" → null (no cap). */
export function parseTokenCap(text: string): Parsed<number | null> {
  if (text.trim() === "") return { ok: true, value: null };
  const micro = parseEurToMicro(text);
  if (micro === null) return { ok: false, error: "The spend cap is an amount in EUR, like 5 or 12.50." };
  if (micro % TOKEN_CAP_MICRO.step !== 0)
    return { ok: false, error: "The spend cap is in whole cents (at most two decimals)." };
  if (micro < TOKEN_CAP_MICRO.min || micro > TOKEN_CAP_MICRO.max)
    return { ok: false, error: "The spend cap is between €0.01 and €1,000,000." };
  return { ok: true, value: micro };
}

/** "3" → 3; "" → null (no limit). */
export function parseTokenConcurrency(text: string): Parsed<number | null> {
  const t = text.trim();
  if (t === "") return { ok: true, value: null };
  const n = /^\d{1,4}$/.test(t) ? Number(t) : NaN;
  if (!Number.isInteger(n) || n < TOKEN_CONCURRENCY.min || n > TOKEN_CONCURRENCY.max)
    return {
      ok: false,
      error: `Concurrent sandboxes is a whole number from ${TOKEN_CONCURRENCY.min} to ${TOKEN_CONCURRENCY.max}.`,
    };
  return { ok: true, value: n };
}

/** The list's words for a token's limits, or null when it has none. */
export function tokenLimitsText(t: {
  spend_cap_micro: number | null;
  max_concurrent_sandboxes: number | null;
}): string[] {
  const out: string[] = [];
  if (t.spend_cap_micro !== null) out.push(`${formatMicro(t.spend_cap_micro)} a month (UTC)`);
  if (t.max_concurrent_sandboxes !== null)
    out.push(`${t.max_concurrent_sandboxes} sandbox${t.max_concurrent_sandboxes === 1 ? "" : "es"} at once`);
  return out;
}
