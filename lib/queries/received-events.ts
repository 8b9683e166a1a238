import { infiniteQueryOptions, queryOptions, type InfiniteData } from "@tanstack/react-query";
import { apiJson, apiPage, apiVoid, withPageTeam } from "../api/core";
import { object } from "../api/read";
import { path } from "../orkestr/path";
import type { Page } from "../orkestr/schemas/common";

// Baton's built-in webhook receiver in the browser: its receiver (one per connection), the events
// it recorded (GET /api/hooks/events, newest first), "Receive in Baton" and "Stop receiving", and
// the one live stream of new events (GET /api/hooks/events/live, SSE) that the events page and the
// sandbox pages listen to. Keys start with "received-events" so one invalidation reaches them all.

/** A receiver as /api/hooks/receivers answers it (never a secret). */
export interface Receiver {
  id: string;
  webhook_id: string;
  url: string;
  created_at: string;
}

/** GET /api/hooks/receivers as the browser keeps it (one cache entry; each page selects its part). */
export interface ReceiverAnswer {
  /** The user's own receiver on the acting team's connection, or null. */
  receiver: Receiver | null;
  /** The webhook ids of every Baton receiver of the acting team, the user's own and their teammates'. */
  teamWebhookIds: readonly string[];
}

/** One verified delivery (lib/server/hooks/view.ts). */
export interface ReceivedEvent {
  id: string;
  event_id: string;
  delivery_id: string;
  type: string;
  sandbox_id: string | null;
  sandbox_status: string | null;
  data: unknown;
  created_at: string;
  received_at: string;
  verified: boolean;
}

export type ReceivedEventsData = InfiniteData<Page<ReceivedEvent>, string | null>;

export const receivedEventKeys = {
  all: ["received-events"] as const,
  receiver: () => ["received-events", "receiver"] as const,
  lists: () => ["received-events", "list"] as const,
  list: (type: string) => ["received-events", "list", { type }] as const,
};

const readReceiverShape = object<{ receiver?: Receiver | null; team_webhook_ids?: unknown }>(
  {},
  { receiver: "object" },
);
/** Tolerant of the list: missing or malformed, nothing is marked, and the receiver still reads. */
function readReceiverAnswer(value: unknown): ReceiverAnswer {
  const answer = readReceiverShape(value);
  const ids = Array.isArray(answer.team_webhook_ids) ? answer.team_webhook_ids : [];
  return {
    receiver: answer.receiver ?? null,
    teamWebhookIds: ids.filter((id): id is string => typeof id === "string"),
  };
}
const readCreated = object<{ receiver: Receiver; created: boolean }>({ receiver: "object", created: "boolean" });
export const readReceivedEvent = object<ReceivedEvent>({
  id: "string",
  event_id: "string",
  delivery_id: "string",
  type: "string",
  received_at: "string",
});

/** Events per page of the feed. */
export const FEED_PAGE_SIZE = 50;

export type ReceiverOwner = "yours" | "teammate" | null;

const receiverAnswer = {
  queryKey: receivedEventKeys.receiver(),
  queryFn: ({ signal }: { signal: AbortSignal }) =>
    apiJson({ path: "/api/hooks/receivers", signal }, readReceiverAnswer),
};

/** The cached answer once the user's receiver was made (Receive in Baton): it is the team's too. */
export const withReceiver =
  (made: Receiver) =>
  (old: ReceiverAnswer | undefined): ReceiverAnswer => ({
    receiver: made,
    teamWebhookIds: [...(old?.teamWebhookIds ?? []).filter((id) => id !== made.webhook_id), made.webhook_id],
  });

/** The cached answer once the user's receiver was stopped (its webhook is gone). */
export const withoutReceiver =
  (stopped: Receiver) =>
  (old: ReceiverAnswer | undefined): ReceiverAnswer => ({
    receiver: null,
    teamWebhookIds: (old?.teamWebhookIds ?? []).filter((id) => id !== stopped.webhook_id),
  });

export const receivedEventQueries = {
  /** The user's own receiver, or null. */
  receiver: () => queryOptions({ ...receiverAnswer, select: (answer: ReceiverAnswer) => answer.receiver }),
  /**
   * Whose Baton receiver webhook `webhookId` is: "yours", "teammate" (another member of the acting
   * team set it up), or null (not a receiver). Undefined while the answer loads.
   */
  receiverOwner: (webhookId: string) =>
    queryOptions({
      ...receiverAnswer,
      select: (answer: ReceiverAnswer): ReceiverOwner =>
        answer.receiver?.webhook_id === webhookId
          ? "yours"
          : answer.teamWebhookIds.includes(webhookId)
            ? "teammate"
            : null,
    }),
  /** The feed, `type` "" for every type. New events are put in front by the live stream. */
  list: (type: string) =>
    infiniteQueryOptions({
      queryKey: receivedEventKeys.list(type),
      queryFn: ({ pageParam, signal }) =>
        apiPage(
          {
            path: "/api/hooks/events",
            query: { type: type || undefined, cursor: pageParam ?? undefined, limit: FEED_PAGE_SIZE },
            signal,
          },
          readReceivedEvent,
        ),
      initialPageParam: null as string | null,
      getNextPageParam: (last) => last.nextCursor,
    }),
};

/** "Receive in Baton": makes (or finds) the receiver of the active connection. */
export function createReceiver(): Promise<{ receiver: Receiver; created: boolean }> {
  return apiJson({ method: "POST", path: "/api/hooks/receivers" }, readCreated);
}

/** Stops receiving: the upstream webhook and the recorded events are deleted. */
export function deleteReceiver(id: string): Promise<void> {
  return apiVoid({ method: "DELETE", path: path`/api/hooks/receivers/${id}` });
}

// ---------------------------------------------------------------------------------------------
// The live stream: one EventSource per tab while anything listens, closed while the tab is hidden
// (events missed meanwhile are in the list, which listeners reload on `ready`).

export interface ReceivedListener {
  /** The stream is (re)open and the server has caught up: reload what a gap may have missed. */
  ready?(): void;
  received?(event: ReceivedEvent): void;
  /** live: open; idle: no receiver (the server answered 204) or the tab is hidden. */
  state?(state: "connecting" | "live" | "idle"): void;
}

const listeners = new Set<ReceivedListener>();
let source: EventSource | null = null;
let state: "connecting" | "live" | "idle" = "idle";

function setState(next: typeof state) {
  if (state === next) return;
  state = next;
  for (const l of listeners) l.state?.(next);
}

function open() {
  if (source || typeof EventSource === "undefined" || document.hidden) return;
  const es = new EventSource(withPageTeam("/api/hooks/events/live"));
  source = es;
  setState("connecting");
  es.addEventListener("ready", () => {
    setState("live");
    for (const l of listeners) l.ready?.();
  });
  es.addEventListener("received", (msg) => {
    let event: ReceivedEvent;
    try {
      event = readReceivedEvent(JSON.parse((msg as MessageEvent).data as string));
    } catch {
      return; // not a frame of ours
    }
    for (const l of listeners) l.received?.(event);
  });
  es.onerror = () => {
    if (source !== es) return;
    // CLOSED: the server said there is nothing to stream (204, no receiver) or refused it; the
    // browser does not retry then. Otherwise it reconnects by itself.
    if (es.readyState === EventSource.CLOSED) {
      source = null;
      setState("idle");
    } else setState("connecting");
  };
}

function close() {
  source?.close();
  source = null;
  setState("idle");
}

function onVisibility() {
  if (document.hidden) close();
  else open();
}

/** Listens to the user's received events; returns the unsubscribe. */
export function subscribeReceived(listener: ReceivedListener): () => void {
  listeners.add(listener);
  if (listeners.size === 1) {
    document.addEventListener("visibilitychange", onVisibility);
    open();
  }
  listener.state?.(state);
  return () => {
    if (!listeners.delete(listener) || listeners.size > 0) return;
    document.removeEventListener("visibilitychange", onVisibility);
    close();
  };
}

/** A receiver was just made or removed: reopen the stream (the server decides what it carries). */
export function restartReceived(): void {
  if (listeners.size === 0) return;
  close();
  open();
}
