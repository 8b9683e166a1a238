"use client";

import { useQuery } from "@tanstack/react-query";
import { formatDateTime, formatUtc } from "../../lib/format";
import { webhookHref } from "../../lib/resource-links";
import type { Webhook } from "../../lib/orkestr/schemas/webhooks";
import { webhookKeys, webhookQueries } from "../../lib/queries/webhooks";
import { EmptyState } from "../layout/empty-state";
import { RetryNotice, SlowNotice } from "../layout/retry-notice";
import { Badge } from "../ui/badge";
import { CodeTabs } from "../ui/code-tabs";
import { Skeleton } from "../ui/skeleton";
import { ReceiverMark } from "./batons-receiver";
import { deliveryLabel, deliveryTone } from "./delivery";
import { describeEventTypes } from "./event-types";
import { QueryError } from "../layout/query-error";
import { listSnippets } from "./snippets";
import { TableScroll } from "../ui/table";
import { usePermission } from "../layout/permissions";
import { TeamLink as Link } from "../layout/team-link";

/** The account's webhooks: a table, live while the page is visible, with its loading, empty and error states. */
export function WebhookList({ baseUrl }: { baseUrl?: string }) {
  const list = useQuery(webhookQueries.list());
  const canWrite = usePermission("webhooks.write");
  return (
    <div className="flex flex-col gap-4">
      <RetryNotice
        query={list}
        queryKey={webhookKeys.list()}
        title={list.data ? "The list is not refreshing" : "Your webhooks could not be loaded yet"}
      />
      {list.isPending ? (
        <>
          <SlowNotice waiting={list.isFetching && list.failureCount === 0} what="the list of webhooks" />
          <Skeleton className="h-48 w-full" data-testid="webhooks-loading" />
        </>
      ) : list.isError && !list.data ? (
        <QueryError
          fallback="The webhooks could not be loaded."
          title="Could not load your webhooks"
          error={list.error}
          onRetry={() => void list.refetch()}
        />
      ) : list.data.length === 0 ? (
        <EmptyState
          icon={<HookIcon />}
          title="No webhooks yet"
          description={
            <>
              A webhook POSTs a signed JSON event to your endpoint when a sandbox is created, paused, resumed,
              terminated or expires, a template build finishes, or a volume or snapshot changes: no polling.
              {canWrite ? " Create one above." : ""}
            </>
          }
        />
      ) : (
        <WebhookTable webhooks={list.data} />
      )}
      <details className="rounded-md border px-3 py-2 text-sm">
        <summary className="cursor-pointer font-medium">List webhooks from code</summary>
        <div className="mt-2">
          <CodeTabs snippets={listSnippets(baseUrl)} testId="list-webhooks-code" />
        </div>
      </details>
    </div>
  );
}

function WebhookTable({ webhooks }: { webhooks: Webhook[] }) {
  return (
    // Focusable: on a phone the table scrolls sideways, and a keyboard must be able to scroll it too.
    <TableScroll className="rounded-lg border" tabIndex={0} role="region" aria-label="Webhooks">
      <table className="w-full text-sm" data-testid="webhook-table">
        <caption className="sr-only">Webhooks, newest first</caption>
        <thead className="border-b bg-muted/50 text-left text-xs text-muted-foreground">
          <tr>
            <th scope="col" className="px-3 py-2 font-medium">
              Webhook
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              Events
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              State
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              Last delivery
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              Created
            </th>
          </tr>
        </thead>
        <tbody>
          {webhooks.map((w) => (
            <tr key={w.id} className="border-b last:border-0 hover:bg-muted/30" data-testid="webhook-row">
              <td className="max-w-md px-3 py-2 align-top">
                <Link
                  href={webhookHref(w.id)}
                  className="font-medium text-primary underline-offset-4 hover:underline"
                  aria-label={`${w.description || w.url || w.id} (${w.id})`}
                >
                  {w.description || w.id}
                </Link>
                <p className="break-all font-mono text-xs text-muted-foreground">{w.url}</p>
                {w.description ? <p className="font-mono text-xs text-muted-foreground">{w.id}</p> : null}
                <ReceiverMark webhookId={w.id} />
              </td>
              <td className="max-w-56 px-3 py-2 align-top text-xs">{describeEventTypes(w.event_types)}</td>
              <td className="px-3 py-2 align-top">
                <EnabledBadge webhook={w} />
              </td>
              <td className="px-3 py-2 align-top">
                <LastDelivery id={w.id} />
              </td>
              <td className="whitespace-nowrap px-3 py-2 align-top text-xs">
                <time dateTime={String(w.created_at ?? "")} title={formatUtc(w.created_at)}>
                  {formatDateTime(w.created_at)}
                </time>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

/** Enabled, or disabled with why (by request, or auto-disabled after a failure streak). */
export function EnabledBadge({ webhook }: { webhook: Webhook }) {
  if (webhook.enabled !== false)
    return (
      <Badge variant="success" data-testid="webhook-state">
        Enabled
      </Badge>
    );
  return (
    <span className="flex flex-col items-start gap-1">
      <Badge variant="neutral" data-testid="webhook-state">
        Disabled
      </Badge>
      {webhook.disabled_reason ? (
        <span className="text-xs text-muted-foreground">{webhook.disabled_reason}</span>
      ) : null}
    </span>
  );
}

function LastDelivery({ id }: { id: string }) {
  const last = useQuery(webhookQueries.lastDelivery(id));
  if (last.isPending) return <span className="text-xs text-muted-foreground">…</span>;
  if (last.isError && !last.data) return <span className="text-xs text-muted-foreground">unavailable</span>;
  if (!last.data) return <span className="text-xs text-muted-foreground">none yet</span>;
  const d = last.data;
  const at = d.last_attempt_at ?? d.created_at;
  return (
    <span className="flex flex-col items-start gap-1">
      <Badge variant={deliveryTone(d)}>{deliveryLabel(d)}</Badge>
      <span className="font-mono text-xs text-muted-foreground">{d.event_type}</span>
      <time className="text-xs text-muted-foreground" dateTime={String(at ?? "")} title={formatUtc(at)}>
        {formatDateTime(at)}
      </time>
    </span>
  );
}

function HookIcon() {
  return (
    <svg
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth="2"
      strokeLinecap="round"
      strokeLinejoin="round"
    >
      <path d="M18 16.98h-5.99c-1.1 0-1.95.94-2.48 1.9A4 4 0 0 1 2 17c.01-.7.2-1.4.57-2" />
      <path d="m6 17 3.13-5.78c.53-.97.1-2.18-.5-3.1a4 4 0 1 1 6.89-4.06" />
      <path d="m12 6 3.13 5.73C15.66 12.7 16.9 13 18 13a4 4 0 0 1 0 8" />
    </svg>
  );
}
