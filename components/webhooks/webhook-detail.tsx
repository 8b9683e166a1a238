"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { formatDateTime, formatUtc } from "../../lib/format";
import type { Snippets } from "../../lib/code/snippet";
import { OrkestrError } from "../../lib/orkestr/errors";
import type { Webhook } from "../../lib/orkestr/schemas/webhooks";
import { webhookKeys, webhookQueries } from "../../lib/queries/webhooks";
import { EmptyState } from "../layout/empty-state";
import { PageHeader } from "../layout/page-header";
import { RetryNotice, SlowNotice } from "../layout/retry-notice";
import { Button } from "../ui/button";
import { CodeTabs } from "../ui/code-tabs";
import { CopyButton } from "../ui/copy-button";
import { Skeleton } from "../ui/skeleton";
import { Deliveries } from "./deliveries";
import { describeEventTypes } from "./event-types";
import { QueryError } from "../layout/query-error";
import {
  deleteSnippets,
  deliveriesSnippets,
  rotateSnippets,
  setEnabledSnippets,
  testSnippets,
  verifySnippets,
} from "./snippets";
import { ReceiverNotice, useReceiverOwner } from "./batons-receiver";
import { WebhookActions } from "./webhook-actions";
import { ReadOnlyNote } from "../ui/read-only-note";
import { useRoleReason } from "../layout/use-role-reason";
import { EnabledBadge } from "./webhook-list";
import { TeamLink as Link } from "../layout/team-link";

/** One webhook: what it sends where, its actions, each action as code, and its delivery log. */
export function WebhookDetail({ id, baseUrl, canWrite }: { id: string; baseUrl?: string; canWrite: boolean }) {
  const webhook = useQuery(webhookQueries.detail(id));
  const [openDelivery, setOpenDelivery] = useState<string | null>(null);
  // Baton's receiver (the user's own or a teammate's): marked, and only what the API allows is offered.
  const { owner } = useReceiverOwner(id);
  // Why Edit, Test, Disable, Rotate and Delete are not offered to this role.
  const noWrite = useRoleReason("webhooks.write", "edit, test or delete webhooks");
  const back = (
    <Link href="/webhooks" className="text-sm text-muted-foreground underline-offset-4 hover:underline">
      ← Webhooks
    </Link>
  );

  if (webhook.isPending)
    return (
      <div className="flex flex-col gap-4">
        {back}
        <h1 className="font-mono text-xl font-semibold">{id}</h1>
        <SlowNotice waiting={webhook.isFetching && webhook.failureCount === 0} what="this webhook" />
        <RetryNotice query={webhook} queryKey={webhookKeys.detail(id)} title="This webhook could not be loaded yet" />
        <Skeleton className="h-40 w-full" />
      </div>
    );
  if (webhook.isError && !webhook.data) {
    const notFound =
      webhook.error instanceof OrkestrError &&
      (webhook.error.status === 404 || webhook.error.code === "webhook_not_found");
    return (
      <div className="flex flex-col gap-4">
        {back}
        <h1 className="font-mono text-xl font-semibold">{id}</h1>
        {notFound ? (
          <EmptyState
            title="No such webhook"
            description="It was deleted, or it belongs to another account than this connection's."
            action={
              <Button asChild>
                <Link href="/webhooks">All webhooks</Link>
              </Button>
            }
          />
        ) : (
          <QueryError
            fallback="The webhook could not be loaded."
            title="Could not load this webhook"
            error={webhook.error}
            onRetry={() => void webhook.refetch()}
          />
        )}
      </div>
    );
  }
  const w = webhook.data;
  return (
    <div className="flex flex-col gap-6">
      {back}
      <PageHeader
        className="pb-0"
        title={w.description || <span className="font-mono">{w.id}</span>}
        description={<span className="break-all font-mono">{w.url}</span>}
        actions={
          canWrite ? (
            <WebhookActions webhook={w} baseUrl={baseUrl} onTestQueued={setOpenDelivery} />
          ) : noWrite ? (
            <ReadOnlyNote className="max-w-xs">{noWrite}</ReadOnlyNote>
          ) : undefined
        }
      />
      {owner ? <ReceiverNotice owner={owner} /> : null}
      <RetryNotice query={webhook} queryKey={webhookKeys.detail(id)} title="This webhook is not refreshing" />
      <Settings webhook={w} batonsReceiver={owner !== null} />
      <Deliveries
        webhookId={w.id}
        webhookEnabled={w.enabled !== false}
        baseUrl={baseUrl}
        canWrite={canWrite}
        open={openDelivery}
        onOpen={setOpenDelivery}
      />
      <ActionCode webhook={w} baseUrl={baseUrl} batonsReceiver={owner !== null} />
    </div>
  );
}

function Settings({ webhook: w, batonsReceiver }: { webhook: Webhook; batonsReceiver: boolean }) {
  return (
    <dl className="grid gap-x-8 gap-y-3 rounded-lg border p-4 text-sm sm:grid-cols-2 lg:grid-cols-3">
      <Item label="Id">
        <span className="flex items-center gap-2">
          <span className="font-mono">{w.id}</span>
          <CopyButton text={w.id} label="Copy id" size="sm" variant="ghost" />
        </span>
      </Item>
      <Item label="State">
        <EnabledBadge webhook={w} />
        {w.enabled === false ? (
          <span className="block text-xs text-muted-foreground">
            Nothing is sent: no events, tests or redeliveries. Enable it to send again.
          </span>
        ) : null}
      </Item>
      <Item label="Failed deliveries in a row">
        {w.consecutive_failures ?? 0}
        <span className="block text-xs text-muted-foreground">The 20th disables the webhook; enabling resets it.</span>
      </Item>
      <Item label="Events">{describeEventTypes(w.event_types)}</Item>
      <Item label="Created">
        <time dateTime={String(w.created_at ?? "")} title={formatUtc(w.created_at)}>
          {formatDateTime(w.created_at)}
        </time>
      </Item>
      <Item label="Signing secret">
        {batonsReceiver ? (
          <>
            Kept by Baton, encrypted.
            <span className="block text-xs text-muted-foreground">Never shown, and not rotated here.</span>
          </>
        ) : (
          <>
            Shown once, at create or rotate.
            <span className="block text-xs text-muted-foreground">Lost it? Rotate to get a new one.</span>
          </>
        )}
      </Item>
    </dl>
  );
}

function Item({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div className="flex min-w-0 flex-col gap-0.5">
      <dt className="text-xs text-muted-foreground">{label}</dt>
      <dd className="break-words">{children}</dd>
    </div>
  );
}

type ActionId = "toggle" | "test" | "deliveries" | "rotate" | "delete" | "verify";
/** What the API refuses on Baton's receivers (409 webhook_owned_by_baton), so not offered as code either. */
const REFUSED_FOR_RECEIVERS: ReadonlySet<ActionId> = new Set(["rotate", "delete"]);

/** Every action of this page as code: pick one, copy it. Baton's receiver: only what the API accepts for it. */
function ActionCode({
  webhook,
  baseUrl,
  batonsReceiver,
}: {
  webhook: Webhook;
  baseUrl?: string;
  batonsReceiver: boolean;
}) {
  const [picked, setAction] = useState<ActionId>("test");
  // Picked before the page knew the webhook is Baton's receiver: that snippet is no longer offered.
  const action = batonsReceiver && REFUSED_FOR_RECEIVERS.has(picked) ? "test" : picked;
  const enabled = webhook.enabled !== false;
  const actions: Record<ActionId, { label: string; snippets: () => Snippets }> = {
    toggle: {
      label: enabled ? "Disable" : "Enable",
      snippets: () => setEnabledSnippets(webhook.id, !enabled, baseUrl),
    },
    test: { label: "Send a test", snippets: () => testSnippets(webhook.id, baseUrl) },
    deliveries: { label: "List deliveries", snippets: () => deliveriesSnippets(webhook.id, baseUrl) },
    rotate: { label: "Rotate the secret", snippets: () => rotateSnippets(webhook.id, baseUrl) },
    delete: { label: "Delete", snippets: () => deleteSnippets(webhook.id, baseUrl) },
    verify: { label: "Verify a delivery's signature (receiver)", snippets: verifySnippets },
  };
  return (
    <section aria-labelledby="action-code-heading" className="flex flex-col gap-3 rounded-lg border p-4">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h2 id="action-code-heading" className="text-lg font-semibold">
          From code
        </h2>
        <label className="flex items-center gap-2 text-sm">
          <span className="text-muted-foreground">Action</span>
          <select
            value={action}
            onChange={(e) => setAction(e.target.value as ActionId)}
            className="h-8 max-w-72 rounded-md border border-input bg-background px-2 text-sm"
            data-testid="action-code-select"
          >
            {(Object.keys(actions) as ActionId[])
              .filter((k) => !(batonsReceiver && REFUSED_FOR_RECEIVERS.has(k)))
              .map((k) => (
                <option key={k} value={k}>
                  {actions[k].label}
                </option>
              ))}
          </select>
        </label>
      </div>
      <CodeTabs snippets={actions[action].snippets()} testId="action-code" />
    </section>
  );
}
