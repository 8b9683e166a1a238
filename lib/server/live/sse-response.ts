import "server-only";
import { ACCESS_RECHECK, type AccessLoss } from "../access-watch";

// One browser tab's server-sent event stream, as the live sandbox view (live-response.ts) and the
// received-events feed (hooks/feed-response.ts) answer it: a retry hint first, a keepalive comment,
// a re-check every few seconds of whether the tab may still listen (lib/server/access-watch.ts), an
// end when the tab goes away or loses the right, and a tab that falls too far behind dropped (its
// EventSource reconnects and catches up). An ended stream's EventSource reconnects, and the
// refusal it then gets (401 or 403) stops it.

/** A comment line this often keeps proxies from closing a quiet stream. An object so a test can shorten it. */
export const LIVE_TIMING = { keepaliveMs: 15_000 };

const encoder = new TextEncoder();

export interface SseSource {
  /** Starts feeding the tab; returns how to stop. `end` closes the tab's stream (the source is done). */
  start(send: (text: string) => void, end: () => void): () => void;
  /** Runs once when the stream closes, whatever closed it. */
  onClose?: () => void;
}

export function sseResponse(
  source: SseSource,
  opts: {
    signal: AbortSignal;
    /** Whether the tab may still listen (null) or what it lost: asked every ACCESS_RECHECK.streamMs. */
    recheck: () => Promise<AccessLoss | null>;
    /** How long a browser waits before reconnecting a dropped stream. */
    retryMs: number;
    /** A tab this far behind (bytes queued) is cut off. */
    maxQueuedBytes: number;
  },
): Response {
  let stop: (() => void) | null = null;
  let keepalive: ReturnType<typeof setInterval> | null = null;
  let watch: ReturnType<typeof setInterval> | null = null;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    stop?.();
    stop = null;
    if (keepalive) clearInterval(keepalive);
    if (watch) clearInterval(watch);
    keepalive = watch = null;
    source.onClose?.();
  };
  // Queued bytes, not chunks, so desiredSize says how far behind the tab is.
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
          if ((controller.desiredSize ?? 0) < -opts.maxQueuedBytes) {
            // Dropped, queue and all (the connection is reset): its EventSource reconnects and catches up.
            open = false;
            close();
            controller.error(new Error("the tab fell too far behind its stream"));
            return;
          }
          controller.enqueue(encoder.encode(text));
        };
        send(`retry: ${opts.retryMs}\n\n`);
        stop = source.start(send, end);
        keepalive = setInterval(() => send(": keepalive\n\n"), LIVE_TIMING.keepaliveMs);
        watch = setInterval(() => {
          opts.recheck().then(
            (loss) => loss && end(),
            () => undefined, // the session store unreachable for a moment: the next tick asks again
          );
        }, ACCESS_RECHECK.streamMs);
        opts.signal.addEventListener("abort", end, { once: true });
        // An already-aborted signal never fires "abort".
        if (opts.signal.aborted) end();
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
