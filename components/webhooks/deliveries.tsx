"use client";

import { keepPreviousData, useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Fragment, useMemo, useState } from "react";
import { formatDateTime, formatUtc } from "../../lib/format";
import { errorText } from "../../lib/orkestr/errors";
import type { WebhookDelivery } from "../../lib/orkestr/schemas/webhooks";
import { redeliver, webhookKeys, webhookQueries, type DeliveryFilter } from "../../lib/queries/webhooks";
import { RetryNotice } from "../layout/retry-notice";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { Badge } from "../ui/badge";
import { Button } from "../ui/button";
import { CodeTabs } from "../ui/code-tabs";
import { Skeleton } from "../ui/skeleton";
import { toast } from "../ui/toast";
import { attemptsText, deliveryLabel, deliveryTone, outcomeText, prettyBody } from "./delivery";
import { QueryError } from "../layout/query-error";
import { redeliverSnippets } from "./snippets";
import { TableScroll } from "../ui/table";

/**
 * A webhook's delivery log, newest first, a page at a time; live while visible (faster while a
 * delivery is pending). A row opens to its request body, the receiver's answer and Redeliver.
 */
export function Deliveries({
  webhookId,
  webhookEnabled,
  baseUrl,
  canWrite,
  open,
  onOpen,
}: {
  webhookId: string;
  /** A disabled webhook is sent nothing, redeliveries neither (the engine answers 409 webhook_disabled). */
  webhookEnabled: boolean;
  baseUrl?: string;
  canWrite: boolean;
  /** The delivery shown open (one at a time). */
  open: string | null;
  onOpen: (deliveryId: string | null) => void;
}) {
  const [filter, setFilter] = useState<DeliveryFilter>("all");
  const log = useInfiniteQuery({ ...webhookQueries.deliveries(webhookId, filter), placeholderData: keepPreviousData });
  const rows = useMemo(() => {
    // Pages shift while new deliveries arrive at the top: keep each id once.
    const seen = new Set<string>();
    const out: WebhookDelivery[] = [];
    for (const page of log.data?.pages ?? [])
      for (const d of page.items) {
        if (seen.has(d.id)) continue;
        seen.add(d.id);
        out.push(d);
      }
    return out;
  }, [log.data]);

  return (
    <section aria-labelledby="deliveries-heading" className="flex flex-col gap-3">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h2 id="deliveries-heading" className="text-lg font-semibold">
          Deliveries
        </h2>
        <div className="flex items-center gap-2">
          <label className="flex items-center gap-2 text-sm">
            <span className="text-muted-foreground">Show</span>
            <select
              value={filter}
              onChange={(e) => setFilter(e.target.value as DeliveryFilter)}
              className="h-8 rounded-md border border-input bg-background px-2 text-sm"
              data-testid="delivery-filter"
            >
              <option value="all">All deliveries</option>
              <option value="failed">Failed</option>
              <option value="pending">Pending or retrying</option>
              <option value="succeeded">Succeeded</option>
            </select>
          </label>
          <Button size="sm" variant="ghost" onClick={() => void log.refetch()} disabled={log.isFetching}>
            {log.isFetching && !log.isFetchingNextPage ? "Refreshing…" : "Refresh now"}
          </Button>
        </div>
      </div>
      <RetryNotice
        query={log}
        queryKey={webhookKeys.deliveryPage(webhookId, filter)}
        title="The delivery log is not refreshing"
      />
      {log.isPending ? (
        <Skeleton className="h-32 w-full" />
      ) : log.isError && !log.data ? (
        <QueryError
          fallback="The deliveries could not be loaded."
          title="Could not load the deliveries"
          error={log.error}
          onRetry={() => void log.refetch()}
        />
      ) : rows.length === 0 ? (
        <p className="rounded-lg border border-dashed px-4 py-8 text-center text-sm text-muted-foreground">
          {filter === "all"
            ? `No deliveries yet. They appear here as events happen${canWrite ? ", or send a test" : ""}.`
            : `No ${filter === "pending" ? "pending or retrying" : filter} deliveries.`}
        </p>
      ) : (
        <TableScroll
          className={`rounded-lg border transition-opacity ${log.isPlaceholderData ? "opacity-60" : ""}`}
          aria-busy={log.isPlaceholderData || undefined}
          // Focusable: on a phone the table scrolls sideways, and a keyboard must be able to scroll it too.
          tabIndex={0}
          role="region"
          aria-label="Deliveries"
        >
          <table className="w-full text-sm" data-testid="delivery-table">
            <caption className="sr-only">Deliveries, newest first</caption>
            <thead className="border-b bg-muted/50 text-left text-xs text-muted-foreground">
              <tr>
                <th scope="col" className="px-3 py-2 font-medium">
                  Status
                </th>
                <th scope="col" className="px-3 py-2 font-medium">
                  Event
                </th>
                <th scope="col" className="px-3 py-2 font-medium">
                  Attempts
                </th>
                <th scope="col" className="px-3 py-2 font-medium">
                  Response
                </th>
                <th scope="col" className="px-3 py-2 font-medium">
                  Duration
                </th>
                <th scope="col" className="px-3 py-2 font-medium">
                  Created
                </th>
                <th scope="col" className="px-3 py-2 font-medium">
                  <span className="sr-only">Details</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => {
                const isOpen = open === d.id;
                const panelId = `delivery-${d.id}`;
                return (
                  <Fragment key={d.id}>
                    <tr className="border-b last:border-0" data-testid="delivery-row" data-delivery={d.id}>
                      <td className="px-3 py-2 align-top">
                        <Badge variant={deliveryTone(d)}>{deliveryLabel(d)}</Badge>
                      </td>
                      <td className="px-3 py-2 align-top font-mono text-xs">
                        {d.event_type}
                        {d.redelivered_from ? (
                          <span className="block font-sans text-muted-foreground">redelivery</span>
                        ) : null}
                      </td>
                      <td className="px-3 py-2 align-top text-xs">{attemptsText(d)}</td>
                      <td className="px-3 py-2 align-top text-xs">{outcomeText(d)}</td>
                      <td className="px-3 py-2 align-top text-xs">
                        {d.duration_ms === null || d.duration_ms === undefined ? "—" : `${d.duration_ms} ms`}
                      </td>
                      <td className="whitespace-nowrap px-3 py-2 align-top text-xs">
                        <time dateTime={String(d.created_at ?? "")} title={formatUtc(d.created_at)}>
                          {formatDateTime(d.created_at)}
                        </time>
                      </td>
                      <td className="px-3 py-2 text-right align-top">
                        <Button
                          size="sm"
                          variant="ghost"
                          aria-expanded={isOpen}
                          aria-controls={isOpen ? panelId : undefined}
                          onClick={() => onOpen(isOpen ? null : d.id)}
                        >
                          {isOpen ? "Hide" : "Details"}
                          <span className="sr-only"> of {d.id}</span>
                        </Button>
                      </td>
                    </tr>
                    {isOpen ? (
                      <tr className="border-b bg-muted/20 last:border-0">
                        <td colSpan={7} id={panelId} className="px-3 py-3">
                          {/* On a phone the table is wider than the screen: the panel keeps to the screen's width. */}
                          <div className="sticky left-3 max-w-[calc(100vw-4rem)]">
                            <DeliveryPanel
                              webhookId={webhookId}
                              webhookEnabled={webhookEnabled}
                              delivery={d}
                              baseUrl={baseUrl}
                              canWrite={canWrite}
                              onRedelivered={onOpen}
                            />
                          </div>
                        </td>
                      </tr>
                    ) : null}
                  </Fragment>
                );
              })}
            </tbody>
          </table>
        </TableScroll>
      )}
      {log.data && rows.length > 0 ? (
        <div className="flex flex-wrap items-center gap-3 text-sm text-muted-foreground">
          <p role="status" aria-live="polite">
            {rows.length} {rows.length === 1 ? "delivery" : "deliveries"}
            {log.hasNextPage ? " loaded so far" : ", all loaded"}
            {log.isFetchingNextPage ? " · loading more…" : ""}
          </p>
          {log.hasNextPage ? (
            <Button
              size="sm"
              variant="outline"
              onClick={() => void log.fetchNextPage()}
              disabled={log.isFetchingNextPage}
            >
              Load older deliveries
            </Button>
          ) : null}
          <span className="ml-auto">Refreshes while this page is open.</span>
        </div>
      ) : null}
    </section>
  );
}

/** One delivery in full: why it failed, when it retries, its request body and the answer's excerpt. */
function DeliveryPanel({
  webhookId,
  delivery,
  baseUrl,
  webhookEnabled,
  canWrite,
  onRedelivered,
}: {
  webhookId: string;
  webhookEnabled: boolean;
  delivery: WebhookDelivery;
  baseUrl?: string;
  canWrite: boolean;
  onRedelivered: (deliveryId: string) => void;
}) {
  const queryClient = useQueryClient();
  const detail = useQuery(webhookQueries.delivery(webhookId, delivery.id, delivery.status === "pending"));
  const again = useMutation({
    mutationFn: () => redeliver(webhookId, delivery.id),
    onSuccess: ({ delivery_id }) => {
      void queryClient.invalidateQueries({ queryKey: webhookKeys.deliveries(webhookId) });
      toast.success("Redelivery queued", { description: `${delivery_id}: the same event, as a new delivery.` });
      onRedelivered(delivery_id);
    },
    onError: (error) => toast.error("Could not redeliver", { description: errorText(error) }),
  });
  // The list's row is refreshed more often than the open panel's read: show the newer of the two.
  const d = {
    ...detail.data,
    ...delivery,
    request_body: detail.data?.request_body,
    response_body_excerpt: detail.data?.response_body_excerpt,
  };
  return (
    <div className="flex flex-col gap-3" data-testid="delivery-panel">
      <dl className="grid gap-x-6 gap-y-1 text-xs sm:grid-cols-[max-content_1fr]">
        <dt className="text-muted-foreground">Delivery</dt>
        <dd className="font-mono">{d.id}</dd>
        <dt className="text-muted-foreground">Event</dt>
        <dd className="font-mono">{d.event_id}</dd>
        {d.redelivered_from ? (
          <>
            <dt className="text-muted-foreground">Redelivery of</dt>
            <dd className="font-mono">{d.redelivered_from}</dd>
          </>
        ) : null}
        <dt className="text-muted-foreground">Last attempt</dt>
        <dd>{d.last_attempt_at ? formatDateTime(d.last_attempt_at) : "not yet"}</dd>
        {d.status === "pending" && d.next_attempt_at ? (
          <>
            <dt className="text-muted-foreground">Next attempt</dt>
            <dd>{formatDateTime(d.next_attempt_at)}</dd>
          </>
        ) : null}
      </dl>
      {d.error ? (
        <Alert variant={d.status === "failed" ? "destructive" : "warning"} role="status">
          <AlertTitle>
            {d.status === "failed"
              ? `Failed after ${attemptsText(d)} attempts`
              : `Attempt ${d.attempts ?? 0} failed${d.next_attempt_at ? "; the engine retries" : ""}`}
          </AlertTitle>
          <AlertDescription className="break-words font-mono text-xs text-foreground" data-testid="delivery-error">
            {d.error}
          </AlertDescription>
        </Alert>
      ) : null}
      {detail.isPending ? (
        <Skeleton className="h-24 w-full" />
      ) : detail.isError && !detail.data ? (
        <p className="text-sm text-destructive">
          {errorText(detail.error, "This delivery's bodies could not be loaded.")}
        </p>
      ) : (
        <div className="grid gap-3 lg:grid-cols-2">
          <Body title="Request body" text={prettyBody(d.request_body)} testId="delivery-request" />
          <Body
            title="Response (first 2 KiB)"
            text={d.response_body_excerpt ? prettyBody(d.response_body_excerpt) : ""}
            empty={
              d.response_status === null || d.response_status === undefined
                ? "No answer was received."
                : "The answer had no body."
            }
            testId="delivery-response"
          />
        </div>
      )}
      {canWrite ? (
        <div className="flex flex-col gap-2">
          <div>
            <Button
              size="sm"
              variant="outline"
              onClick={() => again.mutate()}
              disabled={again.isPending || !webhookEnabled}
            >
              {again.isPending ? "Queueing…" : "Redeliver"}
            </Button>
            <span className="ml-2 text-xs text-muted-foreground">
              {webhookEnabled
                ? "Sends the same event (same id and body) again, as a new delivery."
                : "The webhook is disabled: enable it to redeliver."}
            </span>
          </div>
          <details className="rounded-md border bg-background px-3 py-2 text-sm">
            <summary className="cursor-pointer font-medium">Redeliver from code</summary>
            <div className="mt-2">
              <CodeTabs snippets={redeliverSnippets(webhookId, delivery.id, baseUrl)} testId="redeliver-code" />
            </div>
          </details>
        </div>
      ) : null}
    </div>
  );
}

function Body({ title, text, empty, testId }: { title: string; text: string; empty?: string; testId: string }) {
  return (
    <div className="flex min-w-0 flex-col gap-1">
      <h3 className="text-xs font-medium text-muted-foreground">{title}</h3>
      {text ? (
        <pre
          tabIndex={0}
          data-testid={testId}
          className="max-h-72 overflow-auto rounded-md border bg-background p-2 font-mono text-xs leading-relaxed"
        >
          {text}
        </pre>
      ) : (
        <p className="text-xs text-muted-foreground" data-testid={testId}>
          {empty ?? "Empty."}
        </p>
      )}
    </div>
  );
}
