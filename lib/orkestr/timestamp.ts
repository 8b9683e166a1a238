/** An RFC 3339 string (what the contract specifies) or a unix time in seconds or milliseconds. */
export type TimestampValue = string | number;

/**
 * Milliseconds since the epoch: strings are parsed as RFC 3339 (digits only: unix time); numbers
 * below 10^12 are unix seconds, larger ones milliseconds. Null for null, undefined or unparsable
 * values (and anything that is not a string or number). No zod here: the server's schemas and the browser read timestamps with this one function.
 */
export function toMs(t: TimestampValue | null | undefined | unknown): number | null {
  if (typeof t === "number") return Number.isFinite(t) ? (t < 1e12 ? t * 1000 : t) : null;
  if (typeof t !== "string" || t === "") return null;
  if (/^\d+(\.\d+)?$/.test(t)) return toMs(Number(t));
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? null : ms;
}

/** The same, as a Date. */
export function toDate(t: TimestampValue | null | undefined | unknown): Date | null {
  const ms = toMs(t);
  return ms === null ? null : new Date(ms);
}
