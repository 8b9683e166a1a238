import "server-only";
import { getMigratedDb } from "../db/index";
import { LIVE_TIMING } from "../live/live-response";
import { receivedFeed } from "./feed";

// GET /api/hooks/events/live: a tab's stream of its user's received events (`event: received`,
// one ReceivedEventView each), after an `event: ready` that says the history may be loaded now.

/** A tab this far behind (bytes queued) is cut off; its EventSource reconnects. */
const MAX_QUEUED_BYTES = 1024 * 1024;
const RETRY_MS = 3_000;
const encoder = new TextEncoder();

export function feed() {
  return receivedFeed(getMigratedDb);
}

export function feedResponse(
  receiverIds: ReadonlySet<string>,
  signal: AbortSignal,
  /** Whether the tab may still hear these receivers (session, permission, the receiver still the user's). */
  stillAllowed: () => Promise<boolean>,
): Response {
  const hub = feed();
  let unsubscribe: (() => void) | null = null;
  let keepalive: ReturnType<typeof setInterval> | null = null;
  const close = () => {
    unsubscribe?.();
    unsubscribe = null;
    if (keepalive) clearInterval(keepalive);
    keepalive = null;
  };
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        let open = true;
        const end = () => {
          if (!open) return;
          open = false;
          close();
          try {
            controller.close();
          } catch {
            // already closed by the browser going away
          }
        };
        const send = (text: string) => {
          if (!open) return;
          if ((controller.desiredSize ?? 0) < -MAX_QUEUED_BYTES) {
            open = false;
            close();
            controller.error(new Error("the tab fell too far behind its event stream"));
            return;
          }
          controller.enqueue(encoder.encode(text));
        };
        send(`retry: ${RETRY_MS}\n\n`);
        unsubscribe = hub.subscribe({ receiverIds, send });
        void hub.ready().then(() => send("event: ready\ndata: {}\n\n"));
        keepalive = setInterval(() => {
          send(": keepalive\n\n");
          stillAllowed().then(
            (allowed) => allowed || end(),
            () => undefined, // the session store unreachable for a moment: the next tick asks again
          );
        }, LIVE_TIMING.keepaliveMs);
        signal.addEventListener("abort", end, { once: true });
        if (signal.aborted) end();
      },
      cancel: close,
    },
    new ByteLengthQueuingStrategy({ highWaterMark: 64 * 1024 }),
  );
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
    },
  });
}
