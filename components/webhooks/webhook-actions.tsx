"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { errorText } from "../../lib/orkestr/errors";
import type { Webhook } from "../../lib/orkestr/schemas/webhooks";
import {
  deleteWebhook,
  rotateSecret,
  sendTest,
  setEnabled,
  updateWebhook,
  webhookKeys,
  withoutSecret,
  type WebhookWithSecret,
} from "../../lib/queries/webhooks";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { Button, buttonVariants } from "../ui/button";
import { CodeTabs } from "../ui/code-tabs";
import { Dialog, DialogActions, DialogClose } from "../ui/dialog";
import { toast } from "../ui/toast";
import { useReceiverOwner } from "./batons-receiver";
import { SecretReveal } from "./secret-reveal";
import { webhookPatch } from "./patch";
import { deleteSnippets, rotateSnippets, updateSnippets } from "./snippets";
import { WebhookForm } from "./webhook-form";
import { useTeamRouter } from "../layout/team-link";

/**
 * A webhook's actions: enable or disable, send a test, rotate the secret (confirmed; the new one is
 * shown once), delete (confirmed). `onTestQueued` hands the new delivery to the log to open.
 */
export function WebhookActions({
  webhook,
  baseUrl,
  onTestQueued,
}: {
  webhook: Webhook;
  baseUrl?: string;
  onTestQueued: (deliveryId: string) => void;
}) {
  const queryClient = useQueryClient();
  const enabled = webhook.enabled !== false;
  const [rotateOpen, setRotateOpen] = useState(false);
  const [deleteOpen, setDeleteOpen] = useState(false);
  const [editOpen, setEditOpen] = useState(false);
  const [rotatedShown, setRotatedShown] = useState(false);
  // Baton's receiver (Receive in Baton: the user's own or a teammate's): Baton holds its secret and
  // its URL is Baton's endpoint, so the API refuses a rotation, an edit or a delete
  // (lib/server/hooks/owned-webhooks.ts) and they are not offered (the page says why: ReceiverNotice).
  // A test event or a pause are harmless and stay. Until the answer is in, those three wait too.
  const { owner, known } = useReceiverOwner(webhook.id);
  const mayReshape = known && owner === null;

  const toggle = useMutation({
    mutationFn: () => setEnabled(webhook.id, !enabled),
    onSuccess: (updated) => {
      queryClient.setQueryData(webhookKeys.detail(webhook.id), updated);
      void queryClient.invalidateQueries({ queryKey: webhookKeys.list() });
      // Disabling fails the deliveries still queued: the log shows that at once.
      void queryClient.invalidateQueries({ queryKey: webhookKeys.deliveries(webhook.id) });
      toast.success(updated.enabled ? "Webhook enabled" : "Webhook disabled", {
        description: updated.enabled
          ? "New events are delivered again, and its failure streak starts from zero."
          : "No events are delivered until you enable it; deliveries still queued were cancelled.",
      });
    },
    onError: (error) =>
      toast.error(enabled ? "Could not disable" : "Could not enable", { description: errorText(error) }),
  });

  const test = useMutation({
    mutationFn: () => sendTest(webhook.id),
    onSuccess: ({ delivery_id }) => {
      void queryClient.invalidateQueries({ queryKey: webhookKeys.deliveries(webhook.id) });
      onTestQueued(delivery_id);
      toast.success("Test delivery queued", { description: `${delivery_id}: its attempts appear in the log below.` });
    },
    onError: (error) => toast.error("Could not send a test", { description: errorText(error) }),
  });

  return (
    <div className="flex flex-wrap items-center gap-2" data-testid="webhook-actions">
      {mayReshape ? (
        <Button variant="outline" onClick={() => setEditOpen(true)}>
          Edit…
        </Button>
      ) : null}
      <Button variant="outline" onClick={() => toggle.mutate()} disabled={toggle.isPending}>
        {toggle.isPending ? (enabled ? "Disabling…" : "Enabling…") : enabled ? "Disable" : "Enable"}
      </Button>
      <Button
        variant="outline"
        onClick={() => test.mutate()}
        disabled={test.isPending || !enabled}
        title={enabled ? undefined : "A disabled webhook is sent nothing: enable it to send a test."}
      >
        {test.isPending ? "Sending…" : "Send test"}
      </Button>
      {mayReshape ? (
        <>
          <Button variant="outline" onClick={() => (setRotatedShown(false), setRotateOpen(true))}>
            Rotate secret…
          </Button>
          <Button variant="destructive" onClick={() => setDeleteOpen(true)}>
            Delete…
          </Button>
        </>
      ) : null}
      <Dialog
        open={rotateOpen}
        onOpenChange={setRotateOpen}
        title="Rotate the signing secret"
        className="max-w-2xl"
        // The new secret must not be lost to a stray click on the backdrop (see create-webhook.tsx).
        {...(rotatedShown ? { onClick: undefined } : {})}
      >
        <RotateFlow webhook={webhook} baseUrl={baseUrl} onRotated={() => setRotatedShown(true)} />
      </Dialog>
      <Dialog open={editOpen} onOpenChange={setEditOpen} title="Edit webhook" className="max-w-2xl">
        <EditForm webhook={webhook} baseUrl={baseUrl} onDone={() => setEditOpen(false)} />
      </Dialog>
      <Dialog open={deleteOpen} onOpenChange={setDeleteOpen} title="Delete this webhook?">
        <DeleteConfirm webhook={webhook} baseUrl={baseUrl} />
      </Dialog>
    </div>
  );
}

/** URL, events and description; the secret and the delivery log stay as they are. */
function EditForm({ webhook, baseUrl, onDone }: { webhook: Webhook; baseUrl?: string; onDone: () => void }) {
  const queryClient = useQueryClient();
  return (
    <WebhookForm
      initial={webhook}
      submitLabel="Save changes"
      busyLabel="Saving…"
      failureTitle="The webhook was not changed"
      code={(values) => updateSnippets(webhook.id, { ...webhookPatch(webhook, values) }, baseUrl)}
      codeTestId="edit-webhook-code"
      submit={async (values) => {
        const patch = webhookPatch(webhook, values);
        if (Object.keys(patch).length > 0) {
          const updated = await updateWebhook(webhook.id, patch);
          queryClient.setQueryData(webhookKeys.detail(webhook.id), updated);
          void queryClient.invalidateQueries({ queryKey: webhookKeys.list() });
          toast.success("Webhook saved", { description: "Events from now on go by the new settings." });
        }
        onDone();
      }}
    />
  );
}

function RotateFlow({ webhook, baseUrl, onRotated }: { webhook: Webhook; baseUrl?: string; onRotated: () => void }) {
  const queryClient = useQueryClient();
  // The new secret lives here only, and goes when the dialog closes (lib/queries/webhooks.ts).
  const [rotated, setRotated] = useState<WebhookWithSecret | null>(null);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  if (rotated) {
    return (
      <div className="flex flex-col gap-4">
        <SecretReveal secret={rotated.secret} rotated />
        <div className="flex justify-end">
          <DialogClose className={buttonVariants()}>I have stored the secret</DialogClose>
        </div>
      </div>
    );
  }
  const confirm = async () => {
    setBusy(true);
    setFailure(null);
    try {
      const answer = await rotateSecret(webhook.id);
      queryClient.setQueryData(webhookKeys.detail(webhook.id), withoutSecret(answer));
      setRotated(answer);
      onRotated();
    } catch (error) {
      setFailure(errorText(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="flex flex-col gap-4">
      <p className="text-sm">
        The current secret stops working <strong>at once</strong>: every delivery from now on, retries of earlier events
        included, is signed with the new one. Your receiver rejects them until it has the new secret, so have it ready
        to update. The new secret is shown once.
      </p>
      <details className="rounded-md border px-3 py-2 text-sm">
        <summary className="cursor-pointer font-medium">Rotate from code</summary>
        <div className="mt-2">
          <CodeTabs snippets={rotateSnippets(webhook.id, baseUrl)} testId="rotate-code" />
        </div>
      </details>
      {failure ? (
        <Alert variant="destructive">
          <AlertTitle>The secret was not rotated</AlertTitle>
          <AlertDescription className="text-foreground">{failure}</AlertDescription>
        </Alert>
      ) : null}
      <DialogActions cancelDisabled={busy}>
        <Button onClick={() => void confirm()} disabled={busy}>
          {busy ? "Rotating…" : "Rotate secret"}
        </Button>
      </DialogActions>
    </div>
  );
}

function DeleteConfirm({ webhook, baseUrl }: { webhook: Webhook; baseUrl?: string }) {
  const queryClient = useQueryClient();
  const router = useTeamRouter();
  const remove = useMutation({
    mutationFn: () => deleteWebhook(webhook.id),
    onSuccess: () => {
      // Off the cached list before /webhooks draws it (as the volumes delete does): a row of it would
      // flash there and ask for its deliveries, a 404. Then nothing of it is left to be re-read.
      queryClient.setQueryData<Webhook[]>(webhookKeys.list(), (old) => old?.filter((w) => w.id !== webhook.id));
      queryClient.removeQueries({ queryKey: webhookKeys.detail(webhook.id) });
      queryClient.removeQueries({ queryKey: webhookKeys.deliveries(webhook.id) });
      queryClient.removeQueries({ queryKey: webhookKeys.deliveryOf(webhook.id) });
      void queryClient.invalidateQueries({ queryKey: webhookKeys.list() });
      toast.success("Webhook deleted", { description: `${webhook.url ?? webhook.id} receives no more events.` });
      router.push("/webhooks");
    },
  });
  return (
    <div className="flex flex-col gap-4">
      <p className="text-sm">
        <span className="break-all font-mono">{webhook.url}</span> stops receiving events at once. The webhook&apos;s
        delivery log is deleted with it, and deliveries still queued are never sent. This cannot be undone.
      </p>
      <details className="rounded-md border px-3 py-2 text-sm">
        <summary className="cursor-pointer font-medium">Delete from code</summary>
        <div className="mt-2">
          <CodeTabs snippets={deleteSnippets(webhook.id, baseUrl)} testId="delete-code" />
        </div>
      </details>
      {remove.isError ? (
        <Alert variant="destructive">
          <AlertTitle>The webhook was not deleted</AlertTitle>
          <AlertDescription className="text-foreground">{errorText(remove.error)}</AlertDescription>
        </Alert>
      ) : null}
      <DialogActions cancelDisabled={remove.isPending}>
        <Button variant="destructive" onClick={() => remove.mutate()} disabled={remove.isPending}>
          {remove.isPending ? "Deleting…" : "Delete webhook"}
        </Button>
      </DialogActions>
    </div>
  );
}
