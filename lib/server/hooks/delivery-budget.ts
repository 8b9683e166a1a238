import "server-only";
import type { Db } from "../db/index";
import { hitRateLimit, refundRateLimit } from "../db/rate-limit";
import { AppError } from "../errors";

// The receiving endpoint is public: anyone can POST to `/api/hooks/<anything>`, and each request
// costs a database read, up to 256 KiB read off the socket and an HMAC over it. So every client
// address has a budget of refused deliveries, kept as the sign-in limits are (lib/server/db/rate-limit.ts:
// one atomic upsert per request in the shared database, so every Baton instance on one PostgreSQL
// counts against the same budget). Each delivery takes one unit before anything else is done
// (concurrent requests cannot slip past), and one the receiver takes (recorded, or a duplicate) gives
// it back: what is counted are failures, so an engine delivering a burst of valid events is never
// held back, while a flood of unsigned posts is answered 429 without a lookup or a byte of its body.
// In the database rather than in each process's memory: behind a load balancer a per-instance count
// would give a flood N budgets, and the one upsert costs less than the lookup and HMAC it guards.
//
// The address is the one the front door wrote (lib/server/request-info.ts): X-Forwarded-For only
// through BATON_TRUSTED_PROXIES. Behind a proxy that is not listed, every sender shares the proxy's
// address (or, without the front door, one "unknown" budget), and a flood then holds back the real
// deliveries too: list the proxy.

/** Refused deliveries one client address may send per window (fixed windows, as the sign-in limits). */
export const DELIVERY_FAILURE_LIMITS = { limit: 60, windowMs: 60_000 };

export const deliveryRateKey = (ip: string | null) => `hooks:ip:${ip ?? "unknown"}`;

/**
 * Runs `receive` within the client address's budget: 429 rate_limited with Retry-After once the
 * budget is spent (`receive` is not called), the unit given back when `receive` takes the delivery.
 * Anything else keeps it: a refusal, and a body the client stopped sending halfway.
 */
export async function withinDeliveryBudget<T>(
  db: Db,
  ip: string | null,
  receive: () => Promise<T>,
  now = Date.now(),
): Promise<T> {
  const key = deliveryRateKey(ip);
  const hit = await hitRateLimit(db, key, { ...DELIVERY_FAILURE_LIMITS, now });
  if (!hit.allowed) {
    const seconds = Math.max(1, Math.ceil(hit.retryAfterMs / 1000));
    throw new AppError(
      "rate_limited",
      `Too many refused deliveries from this address (${DELIVERY_FAILURE_LIMITS.limit} a minute). Try again in ${seconds} s.`,
      { retryAfterSeconds: seconds },
    );
  }
  const taken = await receive();
  await refundRateLimit(db, key);
  return taken;
}
