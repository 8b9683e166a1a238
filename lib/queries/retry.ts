// How the console's reads retry (the QueryClient's defaults in app/providers.tsx), and when the next
// try is due, so a page can say "retrying in 8 s" and count down to the very moment it happens.
//
// - A failure that time can fix is retried for as long as the page shows it: no answer from Baton
//   (status 0), 408, 425, 429 and every 5xx but 501 (502/503 also for an upstream that is
//   restarting, 503 fleet_full, 503 database_unavailable). Pages are live views: giving up after a
//   few tries would leave a dead error on screen until a reload, which is what this avoids.
// - Anything else (a 4xx, an answer Baton could not read, a bug) is shown at once, without retrying.
// - The wait honours the server's Retry-After (capped at 5 minutes); without one it doubles from
//   1 s to 30 s, with up to 20 % jitter so tabs that failed together do not come back together.
// - Mutations are never retried by the client (a click is not repeated behind the user's back);
//   the create form retries fleet_full itself, visibly, with the same Idempotency-Key.
// TanStack Query pauses retries while the tab is hidden or the browser is offline.

const MAX_RETRY_AFTER_MS = 5 * 60_000;
const BACKOFF_BASE_MS = 1_000;
const BACKOFF_CAP_MS = 30_000;

interface StatusError {
  status: number;
  code?: string;
  retryAfterSeconds?: number | null;
}

function asStatusError(error: unknown): StatusError | null {
  if (typeof error !== "object" || error === null || !("status" in error) || typeof error.status !== "number")
    return null;
  return error as StatusError;
}

/** True for a failure that may go away by itself (see the file's comment). */
export function isTransient(error: unknown): boolean {
  const e = asStatusError(error);
  if (!e) return false;
  if (e.status === 0) return e.code !== "aborted" && e.code !== "bad_response";
  if (e.status === 408 || e.status === 425 || e.status === 429) return true;
  return e.status >= 500 && e.status !== 501;
}

/** The QueryClient's `retry`: transient failures only, without a count limit. */
export function shouldRetry(_failureCount: number, error: unknown): boolean {
  return isTransient(error);
}

// When each failed attempt's retry is due, keyed by its error object (a fresh one per attempt):
// written by retryDelay (TanStack calls it once per failure and sleeps exactly that long) and read by
// the notices, so what the page says and what happens are the same number.
const dueAt = new WeakMap<object, number>();

/** The wait before retry number `failureCount` (1-based) after `error`: Retry-After, else backoff. */
export function retryDelayMs(failureCount: number, error: unknown, random: () => number = Math.random): number {
  const after = asStatusError(error)?.retryAfterSeconds;
  if (typeof after === "number" && Number.isFinite(after) && after > 0)
    return Math.min(Math.ceil(after * 1000), MAX_RETRY_AFTER_MS);
  const backoff = Math.min(BACKOFF_BASE_MS * 2 ** Math.max(0, failureCount - 1), BACKOFF_CAP_MS);
  return Math.round(backoff * (1 + 0.2 * random()));
}

/** The QueryClient's `retryDelay`: retryDelayMs, remembering when the retry is due. */
export function retryDelay(failureCount: number, error: unknown): number {
  const ms = retryDelayMs(failureCount, error);
  if (typeof error === "object" && error !== null) dueAt.set(error, Date.now() + ms);
  return ms;
}

/** When the retry after this failure is due (ms since the epoch), if one was scheduled. */
export function retryDueAt(error: unknown): number | null {
  return typeof error === "object" && error !== null ? (dueAt.get(error) ?? null) : null;
}
