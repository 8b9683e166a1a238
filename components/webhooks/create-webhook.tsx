"use client";

import { useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRef, useState, type FormEvent } from "react";
import { webhookHref } from "../../lib/links";
import { asOrkestrError } from "../../lib/orkestr/errors";
import { createWebhook, webhookKeys, withoutSecret, type WebhookWithSecret } from "../../lib/queries/webhooks";
import { FormField } from "../sandboxes/create/form-field";
import { newIdempotencyKey } from "../sandboxes/create/idempotency-key";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { Button } from "../ui/button";
import { CodeTabs } from "../ui/code-tabs";
import { Dialog, DialogActions, DialogClose } from "../ui/dialog";
import { Input } from "../ui/input";
import { buttonVariants } from "../ui/button";
import { eventTypesFor, groupEventTypes } from "./event-types";
import { checkReceiverUrl, MAX_URL_LENGTH, refusalText } from "./receiver-url";
import { SecretReveal } from "./secret-reveal";
import { createSnippets } from "./snippets";

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
  const [url, setUrl] = useState("");
  const [description, setDescription] = useState("");
  const [mode, setMode] = useState<"all" | "some">("all");
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set());
  const [urlError, setUrlError] = useState<string | undefined>();
  const [typesError, setTypesError] = useState<string | undefined>();
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [showCode, setShowCode] = useState(false);
  // One key per request body: a retry after a lost answer creates nothing twice.
  const idempotency = useRef<{ key: string; body: string } | null>(null);

  const check = checkReceiverUrl(url);
  const eventTypes = eventTypesFor(mode, picked);
  const input = {
    url: check.ok ? check.url : url.trim(),
    event_types: eventTypes ?? undefined,
    description: description.trim() || undefined,
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setFailure(null);
    const urlProblem = check.ok ? undefined : check.problem;
    const typesProblem = eventTypes === null ? "Pick at least one event type, or choose all events." : undefined;
    setUrlError(urlProblem);
    setTypesError(typesProblem);
    if (urlProblem || typesProblem) {
      document.getElementById(urlProblem ? "webhook-url" : "webhook-types-some")?.focus();
      return;
    }
    const body = {
      url: input.url,
      ...(input.event_types ? { event_types: input.event_types } : {}),
      ...(input.description ? { description: input.description } : {}),
    };
    const json = JSON.stringify(body);
    if (idempotency.current?.body !== json) idempotency.current = { key: newIdempotencyKey(), body: json };
    setBusy(true);
    try {
      const webhook = await createWebhook(body, idempotency.current.key);
      // The list learns of the new webhook without its secret.
      queryClient.setQueryData(webhookKeys.detail(webhook.id), withoutSecret(webhook));
      void queryClient.invalidateQueries({ queryKey: webhookKeys.list() });
      onCreated(webhook);
    } catch (err) {
      const error = asOrkestrError(err);
      // Refused: nothing was created, so the next try is a new request.
      if (error.status >= 400 && error.status < 500) idempotency.current = null;
      const field = (error.body as { field?: unknown } | null)?.field;
      if (error.status === 422 && (field === "url" || /\burl\b/i.test(error.detail))) {
        setUrlError(`The engine refused this URL: ${refusalText(error.detail)}`);
        document.getElementById("webhook-url")?.focus();
      } else setFailure(error.detail);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} noValidate className="flex flex-col gap-4">
      <FormField
        id="webhook-url"
        label="Receiver URL"
        error={urlError}
        hint={
          check.ok && check.note
            ? check.note
            : "A public https:// endpoint. Every delivery is a signed POST with a JSON body."
        }
      >
        {(aria) => (
          <Input
            {...aria}
            type="url"
            inputMode="url"
            autoComplete="off"
            spellCheck={false}
            maxLength={MAX_URL_LENGTH}
            placeholder="https://hooks.example.com/orkestr"
            value={url}
            onChange={(e) => {
              setUrl(e.target.value);
              if (urlError) setUrlError(undefined);
            }}
            onBlur={() => {
              if (url.trim() && !check.ok) setUrlError(check.problem);
            }}
          />
        )}
      </FormField>

      <fieldset className="flex flex-col gap-2" aria-describedby={typesError ? "webhook-types-error" : undefined}>
        <legend className="mb-1.5 text-sm font-medium">Events</legend>
        <label className="flex items-start gap-2 text-sm">
          <input
            type="radio"
            name="webhook-types"
            className="mt-1"
            checked={mode === "all"}
            onChange={() => (setMode("all"), setTypesError(undefined))}
          />
          <span>
            All events
            <span className="block text-xs text-muted-foreground">Including event types added later.</span>
          </span>
        </label>
        <label className="flex items-start gap-2 text-sm">
          <input
            id="webhook-types-some"
            type="radio"
            name="webhook-types"
            className="mt-1"
            checked={mode === "some"}
            onChange={() => setMode("some")}
          />
          <span>Only these</span>
        </label>
        {mode === "some" ? (
          <div className="ml-6 grid gap-3 sm:grid-cols-2" data-testid="event-type-picker">
            {groupEventTypes().map(([resource, types]) => (
              <fieldset key={resource} className="flex flex-col gap-1">
                <legend className="text-xs font-medium capitalize text-muted-foreground">{resource}</legend>
                {types.map((t) => (
                  <label key={t} className="flex items-center gap-2 font-mono text-xs">
                    <input
                      type="checkbox"
                      checked={picked.has(t)}
                      onChange={(e) => {
                        const next = new Set(picked);
                        if (e.target.checked) next.add(t);
                        else next.delete(t);
                        setPicked(next);
                        setTypesError(undefined);
                      }}
                    />
                    {t}
                  </label>
                ))}
              </fieldset>
            ))}
          </div>
        ) : null}
        {typesError ? (
          <p id="webhook-types-error" className="text-xs font-medium text-destructive">
            {typesError}
          </p>
        ) : null}
        <p className="text-xs text-muted-foreground">“Send test” delivers a webhook.test event whatever you pick.</p>
      </fieldset>

      <FormField id="webhook-description" label="Description (optional)" hint="Up to 500 characters.">
        {(aria) => (
          <Input
            {...aria}
            maxLength={500}
            placeholder="Billing service: pause and expiry alerts"
            value={description}
            onChange={(e) => setDescription(e.target.value)}
          />
        )}
      </FormField>

      {failure ? (
        <Alert variant="destructive">
          <AlertTitle>The webhook was not created</AlertTitle>
          <AlertDescription className="text-foreground">{failure}</AlertDescription>
        </Alert>
      ) : null}

      <div>
        <Button type="button" variant="ghost" size="sm" aria-expanded={showCode} onClick={() => setShowCode(!showCode)}>
          {showCode ? "Hide code" : "Show code"}
        </Button>
        {showCode ? (
          <div className="mt-2">
            <CodeTabs snippets={createSnippets(input, baseUrl)} testId="create-webhook-code" />
          </div>
        ) : null}
      </div>

      <DialogActions cancelDisabled={busy}>
        <Button type="submit" disabled={busy}>
          {busy ? "Creating…" : "Create webhook"}
        </Button>
      </DialogActions>
    </form>
  );
}
