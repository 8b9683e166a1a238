"use client";

import { formatAgo, formatDateTime, formatUtc } from "../../lib/format";
import { sandboxHref } from "../../lib/links";
import type { ReceivedEvent } from "../../lib/queries/received-events";
import { useNow } from "../../lib/use-now";
import { StatusBadge } from "../sandboxes/status-badge";
import { Badge } from "../ui/badge";
import { TableScroll } from "../ui/table";
import { TeamLink as Link } from "../layout/team-link";

/** The received events, newest first: when, what, which sandbox, which delivery, verified. */
export function EventTable({ events }: { events: readonly ReceivedEvent[] }) {
  const now = useNow();
  return (
    <TableScroll className="rounded-lg border">
      <table className="w-full text-sm" data-testid="event-feed">
        <caption className="sr-only">Received webhook events, newest first</caption>
        <thead className="bg-muted/50 text-left text-xs text-muted-foreground">
          <tr>
            <th scope="col" className="px-3 py-2 font-medium">
              Received
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              Type
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              Sandbox
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              Delivery
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              Signature
            </th>
          </tr>
        </thead>
        <tbody>
          {events.map((e) => {
            const at = Date.parse(e.received_at);
            return (
              <tr key={e.id} className="border-t align-top" data-event-type={e.type} data-event-id={e.event_id}>
                <td className="px-3 py-2 whitespace-nowrap">
                  <time dateTime={e.received_at} title={formatUtc(e.received_at)}>
                    {formatDateTime(e.received_at)}
                  </time>
                  {now !== null ? (
                    <span className="block text-xs text-muted-foreground">{formatAgo(Math.max(0, now - at))}</span>
                  ) : null}
                </td>
                <td className="px-3 py-2">
                  <code className="font-mono text-xs">{e.type}</code>
                  <details className="mt-1 text-xs">
                    <summary className="cursor-pointer text-muted-foreground hover:text-foreground">Payload</summary>
                    <pre className="mt-1 max-h-64 max-w-md overflow-auto rounded bg-muted p-2 font-mono text-[11px] whitespace-pre-wrap">
                      {JSON.stringify(
                        { id: e.event_id, type: e.type, created_at: e.created_at, data: e.data },
                        null,
                        2,
                      )}
                    </pre>
                  </details>
                </td>
                <td className="px-3 py-2">
                  {e.sandbox_id ? (
                    <div className="flex flex-col items-start gap-1">
                      <Link
                        href={sandboxHref(e.sandbox_id)}
                        className="font-mono text-xs underline-offset-4 hover:underline"
                      >
                        {e.sandbox_id}
                      </Link>
                      {e.sandbox_status ? <StatusBadge status={e.sandbox_status} /> : null}
                    </div>
                  ) : (
                    <span className="text-muted-foreground">—</span>
                  )}
                </td>
                <td className="px-3 py-2 font-mono text-xs break-all">{e.delivery_id}</td>
                <td className="px-3 py-2">
                  <Badge
                    variant="success"
                    title="The HMAC-SHA256 signature of the raw body matched this receiver's secret"
                  >
                    Verified
                  </Badge>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableScroll>
  );
}
