"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useRef, useState } from "react";
import { webhookHref } from "../../lib/resource-links";
import { asOrkestrError } from "../../lib/orkestr/errors";
import { createWebhook, webhookKeys, withoutSecret, type WebhookWithSecret } from "../../lib/queries/webhooks";
import { newIdempotencyKey } from "../sandboxes/create/idempotency-key";
import { Button, buttonVariants } from "../ui/button";
import { Dialog, DialogClose } from "../ui/dialog";
import { SecretReveal } from "./secret-reveal";
import { createBody, createSnippets } from "./snippets";
import { WebhookForm } from "./webhook-form";
import { TeamLink as Link } from "../layout/team-link";

/** "Create webhook": the button and its dialog (form, then the secret, once). */
export function CreateWebhookButton({ baseUrl }: { baseUrl?: string }) {
  const [open, setOpen] = useState(false);
  const [secretShown, setSecretShown] = useState(false);
  return (
    <>
      <Button onClick={() => (setSecretShown(false), setOpen(true))}>Create webhook</Button>
      <Dialog
        open={open}
        onOpenChange={setOpen}
        title="Create a webhook"
        className="max-w-2xl"
        // While the secret shows, a stray click on the backdrop must not close it for good: only
        // the dialog's own button (or Escape, a deliberate key) does.
        {...(secretShown ? { onClick: undefined } : {})}
      >
        {/* Rendered only while open: closing drops the form and any secret with it. */}
        <CreateWebhookFlow baseUrl={baseUrl} onSecretShown={() => setSecretShown(true)} />
      </Dialog>
    </>
  );
}

function CreateWebhookFlow({ baseUrl, onSecretShown }: { baseUrl?: string; onSecretShown: () => void }) {
  // The created webhook with its secret: this component's state only (see lib/queries/webhooks.ts).
  const [created, setCreated] = useState<WebhookWithSecret | null>(null);
  if (created) {
    return (
      <div className="flex flex-col gap-4">
        <p className="text-sm">
          Webhook <span className="font-mono">{created.id}</span> receives events at{" "}
          <span className="break-all font-mono">{created.url}</span>.
        </p>
        <SecretReveal secret={created.secret} />
        <div className="flex flex-col-reverse gap-2 sm:flex-row sm:justify-end">
          <Link href={webhookHref(created.id)} className={buttonVariants({ variant: "outline" })}>
            Open webhook
          </Link>
          <DialogClose className={buttonVariants()}>I have stored the secret</DialogClose>
        </div>
      </div>
    );
  }
  return <CreateWebhookForm baseUrl={baseUrl} onCreated={(w) => (setCreated(w), onSecretShown())} />;
}

function CreateWebhookForm({
  baseUrl,
  onCreated,
}: {
  baseUrl?: string;
  onCreated: (webhook: WebhookWithSecret) => void;
}) {
  const queryClient = useQueryClient();
  // One key per request body: a retry after a lost answer creates nothing twice.
  const idempotency = useRef<{ key: string; body: string } | null>(null);
  return (
    <WebhookForm
      submitLabel="Create webhook"
      busyLabel="Creating…"
      failureTitle="The webhook was not created"
      code={(values) => createSnippets(values, baseUrl)}
      codeTestId="create-webhook-code"
      submit={async (values) => {
        const body = createBody(values);
        const json = JSON.stringify(body);
        if (idempotency.current?.body !== json) idempotency.current = { key: newIdempotencyKey(), body: json };
        try {
          const webhook = await createWebhook(body, idempotency.current.key);
          // The list learns of the new webhook without its secret.
          queryClient.setQueryData(webhookKeys.detail(webhook.id), withoutSecret(webhook));
          void queryClient.invalidateQueries({ queryKey: webhookKeys.list() });
          onCreated(webhook);
        } catch (err) {
          // Refused: nothing was created, so the next try is a new request.
          const status = asOrkestrError(err).status;
          if (status >= 400 && status < 500) idempotency.current = null;
          throw err;
        }
      }}
    />
  );
}
