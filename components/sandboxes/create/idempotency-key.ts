/**
 * A fresh Idempotency-Key. crypto.randomUUID exists only in secure contexts (https, localhost); a
 * console served over plain http on a LAN address falls back to getRandomValues, which exists everywhere.
 */
export function newIdempotencyKey(): string {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
