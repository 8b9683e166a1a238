"use client";

import { useQueryClient, type QueryKey } from "@tanstack/react-query";
import { useState, type ReactNode } from "react";
import { errorText } from "../../lib/orkestr/errors";
import { isTransient, retryDueAt } from "../../lib/queries/retry";
import { useNow } from "../../lib/use-now";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { Button } from "../ui/button";
import { retryText } from "./retry-text";

/** What a notice needs of a query (a UseQueryResult has all of it). */
export interface RetryingQuery {
  failureCount: number;
  failureReason: unknown;
  isFetching: boolean;
}

/** The failure a query is retrying after, or null (no failure, or one that is shown as an error instead). */
export function retryingFailure(query: RetryingQuery): unknown {
  return query.failureCount > 0 && query.failureReason && isTransient(query.failureReason) ? query.failureReason : null;
}

/** Whole seconds until the retry after `error` is due (lib/queries/retry.ts), on the page's clock. */
export function useRetryCountdown(error: unknown): number | null {
  const now = useNow();
  const due = retryDueAt(error);
  return due === null || now === null ? null : Math.max(0, Math.ceil((due - now) / 1000));
}

/**
 * Cancels the retry that is waiting and asks again at once (a refetch alone would join the waiting
 * retry when the query has no data yet).
 */
export function useRetryNow(queryKey: QueryKey): () => void {
  const queryClient = useQueryClient();
  return () =>
    void queryClient
      .cancelQueries({ queryKey, exact: true })
      .then(() => queryClient.refetchQueries({ queryKey, exact: true }));
}

/**
 * A read that keeps failing, while it is retried: what happened (the server's sentence), what Baton
 * does next (a live countdown to the retry, which honours Retry-After), and "Retry now". `children`
 * says what the user still sees meanwhile ("the rows below are from …").
 */
export function RetryNotice({
  query,
  queryKey,
  title,
  children,
}: {
  query: RetryingQuery;
  queryKey: QueryKey;
  title: string;
  children?: ReactNode;
}) {
  const failure = retryingFailure(query);
  const secondsLeft = useRetryCountdown(failure);
  const retryNow = useRetryNow(queryKey);
  if (!failure) return null;
  return (
    <Alert variant="warning" role="status" data-testid="retry-notice">
      <AlertTitle>{title}</AlertTitle>
      <AlertDescription className="flex flex-col gap-2 text-foreground">
        <p>{errorText(failure)}</p>
        {children}
        <div className="flex flex-wrap items-center gap-3">
          {/* The countdown itself is not announced every second; the status above is, once. */}
          <p role="timer" aria-live="off" className="font-medium">
            {retryText(secondsLeft, query.failureCount)}
          </p>
          <Button size="sm" variant="outline" onClick={retryNow} disabled={secondsLeft === 0}>
            Retry now
          </Button>
        </div>
      </AlertDescription>
    </Alert>
  );
}

/** Seconds a first load has been waiting, once it is past `afterMs` (null before, or when not waiting). */
export function useWaitingSeconds(waiting: boolean, afterMs = 3_000): number | null {
  const now = useNow();
  const [since, setSince] = useState<number | null>(null);
  // The start of the wait, on the page's clock (adjusting state during render rather than in an effect).
  if (waiting && since === null && now !== null) setSince(now);
  if (!waiting && since !== null) setSince(null);
  if (!waiting || since === null || now === null || now - since < afterMs) return null;
  return Math.floor((now - since) / 1000);
}

/**
 * A first load that is slow but not failing: says so instead of leaving a skeleton unexplained.
 * Baton's server waits up to 30 s for the orkestr API before it answers with a timeout.
 */
export function SlowNotice({ waiting, what }: { waiting: boolean; what: string }) {
  const seconds = useWaitingSeconds(waiting);
  if (seconds === null) return null;
  return (
    <p role="status" className="text-sm text-muted-foreground" data-testid="slow-notice">
      Still waiting for {what}: {seconds} s so far. The orkestr API is answering slowly; Baton waits up to 30 s, then
      retries.
    </p>
  );
}
