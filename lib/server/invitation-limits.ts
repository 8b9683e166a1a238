import "server-only";
import type { Db } from "./db/index";
import { hitRateLimit } from "./db/rate-limit";
import { AppError } from "./errors";
import { inWords } from "./sign-in";

// The public invitation endpoints (lookup, accept) are limited per client address: a link's token
// is 256 random bits, so this is about load and noise, not about guessing.

export const INVITATION_LIMITS = {
  lookup: { limit: 60, windowMs: 15 * 60_000 },
  accept: { limit: 20, windowMs: 15 * 60_000 },
} as const;

export async function limitInvitationCalls(db: Db, kind: keyof typeof INVITATION_LIMITS, ip: string | null) {
  const r = await hitRateLimit(db, `invitation:${kind}:${ip ?? "unknown"}`, INVITATION_LIMITS[kind]);
  if (!r.allowed)
    throw new AppError("rate_limited", `Too many invitation requests. Try again in ${inWords(r.retryAfterMs)}.`, {
      retryAfterSeconds: Math.max(1, Math.ceil(r.retryAfterMs / 1000)),
    });
}
