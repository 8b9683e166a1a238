import "server-only";
import type { AccessLoss } from "../access-watch";
import { getMigratedDb } from "../db/index";
import { AppError } from "../errors";
import { sessionStreams } from "../live/session-streams";
import { sseResponse } from "../live/sse-response";
import { receivedFeed } from "./feed";

// GET /api/hooks/events/live: a tab's stream of its user's received events (`event: received`,
// one ReceivedEventView each), after an `event: ready` that says the history may be loaded now.

/** A tab this far behind (bytes queued) is cut off; its EventSource reconnects. */
const MAX_QUEUED_BYTES = 1024 * 1024;
const RETRY_MS = 3_000;

/**
 * Received-event streams one session may hold open on this instance, as for the live sandbox view
 * (lib/server/live/live-response.ts): every console tab opens one. An object so a test can lower it.
 */
export const FEED_LIMITS = { streamsPerSession: 64 };

const feedStreams = sessionStreams(
  FEED_LIMITS,
  (open) =>
    new AppError(
      "rate_limited",
      `This browser has ${open} Baton tabs listening for received events, the most one sign-in may keep open at once. Close some tabs; the others keep updating.`,
      { retryAfterSeconds: RETRY_MS / 1000 },
    ),
);

export function feed() {
  return receivedFeed(getMigratedDb);
}

export function feedResponse(
  /** The tab's session: the stream cap counts per session (429 rate_limited past it). */
  sessionId: string,
  receiverIds: ReadonlySet<string>,
  signal: AbortSignal,
  /** Whether the tab may still hear these receivers (null) or what it lost (session, team, role, receiver). */
  recheck: () => Promise<AccessLoss | null>,
): Response {
  const uncount = feedStreams.open(sessionId);
  const hub = feed();
  return sseResponse(
    {
      start: (send) => {
        const unsubscribe = hub.subscribe({ receiverIds, send });
        void hub.ready().then(() => send("event: ready\ndata: {}\n\n"));
        return unsubscribe;
      },
      onClose: uncount,
    },
    { signal, recheck, retryMs: RETRY_MS, maxQueuedBytes: MAX_QUEUED_BYTES },
  );
}
