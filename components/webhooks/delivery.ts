// How a delivery reads on screen: its status in words and tone, its attempts, and its bodies.
import type { Tone } from "../ui/tone";

export interface DeliveryLike {
  status?: string | null;
  attempts?: number | null;
  max_attempts?: number | null;
  response_status?: number | null;
  error?: string | null;
  next_attempt_at?: string | number | null;
}

/** The status as the page names it: a pending delivery that already failed once is "retrying". */
export function deliveryLabel(d: DeliveryLike): string {
  if (d.status === "pending") return (d.attempts ?? 0) > 0 ? "retrying" : "pending";
  return d.status ?? "unknown";
}

export function deliveryTone(d: DeliveryLike): Tone {
  if (d.status === "succeeded") return "success";
  if (d.status === "failed") return "destructive";
  if (d.status === "pending") return (d.attempts ?? 0) > 0 ? "warning" : "pending";
  return "neutral";
}

/** "2 of 4": attempts made of the most there will be. */
export function attemptsText(d: DeliveryLike): string {
  const made = d.attempts ?? 0;
  return d.max_attempts ? `${made} of ${d.max_attempts}` : String(made);
}

/** What the receiver answered, or why there was no answer. */
export function outcomeText(d: DeliveryLike): string {
  if (d.response_status !== null && d.response_status !== undefined) {
    const ok = d.response_status >= 200 && d.response_status < 300;
    return ok ? `HTTP ${d.response_status}` : `HTTP ${d.response_status} (not 2xx)`;
  }
  if (d.error) return "no answer";
  return (d.attempts ?? 0) === 0 ? "not sent yet" : "—";
}

/**
 * A body for reading: JSON pretty-printed with two spaces, anything else as it came (a response
 * excerpt is cut at 2 KiB, so it is often not valid JSON even when the receiver sent JSON).
 */
export function prettyBody(body: unknown): string {
  if (body === null || body === undefined) return "";
  if (typeof body !== "string") return JSON.stringify(body, null, 2);
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}
