"use client";

import { useQuery } from "@tanstack/react-query";
import { receivedEventQueries, type ReceiverOwner } from "../../lib/queries/received-events";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { Badge } from "../ui/badge";
import { TeamLink as Link } from "../layout/team-link";

// A webhook Baton made for "Receive in Baton" (the user's own, or a teammate's on the same team):
// Baton holds its secret and its URL is Baton's endpoint, so the API refuses to rotate, edit or
// delete it (lib/server/hooks/owned-webhooks.ts). The webhooks pages mark it and do not offer those;
// only whoever set it up can stop it, from the Events page.

/**
 * Whose Baton receiver the webhook is: "yours", "teammate", or null for an ordinary webhook.
 * `known` is false only while the answer loads: a failed read counts as ordinary (the server still
 * refuses what would break a receiver).
 */
export function useReceiverOwner(webhookId: string): { owner: ReceiverOwner; known: boolean } {
  const query = useQuery(receivedEventQueries.receiverOwner(webhookId));
  return { owner: query.data ?? null, known: !query.isPending };
}

/** The mark in the webhook list's row. */
export function ReceiverMark({ webhookId }: { webhookId: string }) {
  const { owner } = useReceiverOwner(webhookId);
  if (!owner) return null;
  return (
    <span className="mt-1 flex flex-wrap items-center gap-x-2 gap-y-1" data-testid="batons-receiver-mark">
      <Badge variant="neutral">Baton&apos;s receiver</Badge>
      <span className="text-xs text-muted-foreground">
        {owner === "yours" ? "Yours: stop it on Events" : "A teammate's: only they can stop it"}
      </span>
    </span>
  );
}

const eventsLink = (
  <Link href="/events" className="underline underline-offset-2">
    Events
  </Link>
);

/** The notice on the webhook's page: whose receiver it is, who stops it and where, and what is not offered. */
export function ReceiverNotice({ owner }: { owner: "yours" | "teammate" }) {
  return (
    <Alert role="status" data-testid="batons-receiver">
      {owner === "yours" ? (
        <>
          <AlertTitle>Baton&apos;s own receiver</AlertTitle>
          <AlertDescription>
            This webhook delivers to Baton, which keeps its secret. Its events are on the {eventsLink} page; stop
            receiving there. Rotating, editing or deleting it here would break it, so those are not offered.
          </AlertDescription>
        </>
      ) : (
        <>
          <AlertTitle>Baton&apos;s receiver of a teammate</AlertTitle>
          <AlertDescription>
            A teammate set this webhook up with Receive in Baton: it delivers to Baton, which keeps its secret, and only
            they can stop it, from {eventsLink} → Stop receiving. Rotating, editing or deleting it here would break it,
            so those are not offered.
          </AlertDescription>
        </>
      )}
    </Alert>
  );
}
