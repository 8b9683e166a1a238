import "server-only";
import type { AccessLoss } from "../access-watch";
import { getMigratedDb } from "../db/index";
import { sseResponse } from "../live/sse-response";
import { receivedFeed } from "./feed";

// GET /api/hooks/events/live: a tab's stream of its user's received events (`event: received`,
// one ReceivedEventView each), after an `event: ready` that says the history may be loaded now.

/** A tab this far behind (bytes queued) is cut off; its EventSource reconnects. */
const MAX_QUEUED_BYTES = 1024 * 1024;
const RETRY_MS = 3_000;

export function feed() {
  return receivedFeed(getMigratedDb);
}

export function feedResponse(
  receiverIds: ReadonlySet<string>,
  signal: AbortSignal,
  /** Whether the tab may still hear these receivers (null) or what it lost (session, team, role, receiver). */
  recheck: () => Promise<AccessLoss | null>,
): Response {
  const hub = feed();
  return sseResponse(
    {
      start: (send) => {
        const unsubscribe = hub.subscribe({ receiverIds, send });
        void hub.ready().then(() => send("event: ready\ndata: {}\n\n"));
        return unsubscribe;
      },
    },
    { signal, recheck, retryMs: RETRY_MS, maxQueuedBytes: MAX_QUEUED_BYTES },
  );
}
