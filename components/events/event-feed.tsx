"use client";

import { useInfiniteQuery, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useId, useMemo, useState } from "react";
import { errorText } from "../../lib/orkestr/errors";
import { WEBHOOK_EVENT_TYPES } from "../../lib/orkestr/webhook-events";
import {
  receivedEventKeys,
  receivedEventQueries,
  subscribeReceived,
  type ReceivedEvent,
  type ReceivedEventsData,
} from "../../lib/queries/received-events";
import { EmptyState } from "../layout/empty-state";
import { RetryNotice } from "../layout/lazy-notices";
import { Button } from "../ui/button";
import { Skeleton } from "../ui/skeleton";
import { ReceiveInBaton } from "../webhooks/receive-in-baton";
import { usePermission } from "../layout/permissions";
import { EventTable } from "./event-table";
import { ReceiverBar } from "./receiver-bar";
import { TeamLink as Link } from "../layout/team-link";

/** Puts a live event in front of a cached feed (once: `ready` re-reads may already hold it). */
function prepend(data: ReceivedEventsData | undefined, event: ReceivedEvent): ReceivedEventsData | undefined {
  if (!data?.pages.length) return data;
  if (data.pages.some((p) => p.items.some((e) => e.id === event.id))) return data;
  const [first, ...rest] = data.pages;
  return { ...data, pages: [{ ...first!, items: [event, ...first!.items] }, ...rest] };
}

/**
 * The events page's body: the receiver (or the button that makes one), then the feed, newest first,
 * live. Pausing freezes what is shown while new events keep arriving underneath (counted); the type
 * filter is in the URL (`?type=`).
 */
export function EventFeed({ baseUrl, initialType }: { baseUrl: string; initialType: string }) {
  const queryClient = useQueryClient();
  const canChange = usePermission("sandboxes.write");
  const [type, setType] = useState(initialType);
  const [frozen, setFrozen] = useState<readonly ReceivedEvent[] | null>(null);
  const [live, setLive] = useState<"connecting" | "live" | "idle">("idle");
  const filterId = useId();
  const receiver = useQuery(receivedEventQueries.receiver());
  const feed = useInfiniteQuery({ ...receivedEventQueries.list(type), enabled: !!receiver.data });

  useEffect(() => {
    if (!receiver.data) return;
    return subscribeReceived({
      state: setLive,
      // The stream (re)opened: whatever arrived while it was closed is in a fresh read.
      ready: () => void queryClient.invalidateQueries({ queryKey: receivedEventKeys.lists() }),
      received: (event) => {
        for (const t of ["", event.type])
          queryClient.setQueryData<ReceivedEventsData>(receivedEventKeys.list(t), (d) => prepend(d, event));
      },
    });
  }, [receiver.data, queryClient]);

  const events = useMemo(() => feed.data?.pages.flatMap((p) => p.items) ?? [], [feed.data]);
  const shown = frozen ?? events;
  const arrivedWhilePaused = frozen ? events.filter((e) => !frozen.some((f) => f.id === e.id)).length : 0;

  const chooseType = (next: string) => {
    setType(next);
    setFrozen(null);
    const url = new URL(window.location.href);
    if (next) url.searchParams.set("type", next);
    else url.searchParams.delete("type");
    window.history.replaceState(window.history.state, "", url);
  };

  if (receiver.isPending)
    return (
      <>
        <RetryNotice
          query={receiver}
          queryKey={receivedEventKeys.receiver()}
          title="Baton's receiver could not be read"
        />
        <Skeleton className="h-64 w-full" />
      </>
    );
  if (receiver.isError)
    return (
      <div className="flex flex-col items-start gap-3">
        <p role="alert" className="text-sm text-destructive">
          {errorText(receiver.error, "Baton could not read its receiver.")}
        </p>
        <Button size="sm" variant="outline" onClick={() => void receiver.refetch()}>
          Try again
        </Button>
      </div>
    );
  if (!receiver.data)
    return (
      <EmptyState
        icon={
          <svg viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" aria-hidden="true">
            <path d="M4 12h4l2-6 4 12 2-6h4" strokeLinecap="round" strokeLinejoin="round" />
          </svg>
        }
        title="Baton is not receiving events yet"
        description={
          <>
            One click subscribes a webhook on this connection that delivers every event to Baton itself. Baton keeps its
            secret encrypted, checks each delivery&apos;s signature, and shows the events here as they arrive; the
            sandbox pages then update from them instead of waiting for their next poll.
          </>
        }
        action={<ReceiveInBaton />}
      />
    );

  return (
    <div className="flex flex-col gap-4">
      <ReceiverBar receiver={receiver.data} baseUrl={baseUrl} />
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div className="flex flex-col gap-1">
          <label htmlFor={filterId} className="text-xs font-medium text-muted-foreground">
            Event type
          </label>
          <select
            id={filterId}
            value={type}
            onChange={(e) => chooseType(e.target.value)}
            className="h-9 rounded-md border border-input bg-background px-2 text-sm"
          >
            <option value="">All types</option>
            {WEBHOOK_EVENT_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </div>
        <div className="flex items-center gap-3">
          <span role="status" className="flex items-center gap-2 text-xs text-muted-foreground" data-live={live}>
            <span
              aria-hidden="true"
              className={
                live === "live"
                  ? "size-2 rounded-full bg-success"
                  : "size-2 animate-pulse rounded-full bg-muted-foreground motion-reduce:animate-none"
              }
            />
            {frozen
              ? `Paused${arrivedWhilePaused ? `: ${arrivedWhilePaused} new` : ""}`
              : live === "live"
                ? "Live"
                : "Connecting…"}
          </span>
          <Button
            size="sm"
            variant="outline"
            aria-pressed={frozen !== null}
            onClick={() => setFrozen(frozen ? null : events)}
          >
            {frozen ? "Resume" : "Pause"}
          </Button>
        </div>
      </div>
      <RetryNotice query={feed} queryKey={receivedEventKeys.list(type)} title="The received events could not be read" />
      {feed.isPending ? (
        <Skeleton className="h-48 w-full" />
      ) : feed.isError && !feed.data ? (
        <p role="alert" className="text-sm text-destructive">
          {errorText(feed.error, "Baton could not read the received events.")}
        </p>
      ) : shown.length === 0 ? (
        <EmptyState
          title={type ? `No ${type} events received yet` : "Waiting for the first event"}
          description={
            canChange ? (
              <>
                Events appear here as soon as the webhook delivers them:{" "}
                <Link href="/sandboxes/new">create a sandbox</Link>, pause one, or send a test event.
              </>
            ) : (
              "Events appear here as soon as the webhook delivers them, when a teammate creates, pauses or terminates a sandbox."
            )
          }
        />
      ) : (
        <EventTable events={shown} />
      )}
      {feed.hasNextPage ? (
        <Button
          variant="outline"
          className="self-center"
          onClick={() => void feed.fetchNextPage()}
          disabled={feed.isFetchingNextPage}
        >
          {feed.isFetchingNextPage ? "Loading…" : "Load older events"}
        </Button>
      ) : null}
    </div>
  );
}
