"use client";

import { useState, type FormEvent } from "react";
import type { Snippets } from "../../lib/code/snippet";
import { asOrkestrError } from "../../lib/orkestr/errors";
import { FormField } from "../sandboxes/create/form-field";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { Button } from "../ui/button";
import { CodeTabs } from "../ui/code-tabs";
import { DialogActions } from "../ui/dialog";
import { Input } from "../ui/input";
import { describeEventTypes, eventTypesFor, groupEventTypes } from "./event-types";
import { checkReceiverUrl, MAX_URL_LENGTH, refusalText } from "./receiver-url";

/** What the form sends: the URL, the event types (undefined: every type) and the description. */
export interface WebhookFormValues {
  url: string;
  event_types?: string[];
  description?: string;
}

/**
 * The fields of a webhook (URL, events, description) with the browser's own checks, the engine's
 * URL refusal shown on the URL field, the request as code, and the submit button. Create and Edit
 * both use it; `submit` throws the API's error, which the form shows.
 */
export function WebhookForm({
  initial,
  submitLabel,
  busyLabel,
  failureTitle,
  code,
  codeTestId,
  submit: send,
}: {
  initial?: { url?: string | null; event_types?: readonly string[] | null; description?: string | null };
  submitLabel: string;
  busyLabel: string;
  failureTitle: string;
  code: (values: WebhookFormValues) => Snippets;
  codeTestId: string;
  submit: (values: WebhookFormValues) => Promise<void>;
}) {
  const initialAll = !initial?.event_types || describeEventTypes(initial.event_types) === "All events";
  const [url, setUrl] = useState(initial?.url ?? "");
  const [description, setDescription] = useState(initial?.description ?? "");
  const [mode, setMode] = useState<"all" | "some">(initialAll ? "all" : "some");
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set(initialAll ? [] : (initial?.event_types ?? [])));
  const [urlError, setUrlError] = useState<string | undefined>();
  const [typesError, setTypesError] = useState<string | undefined>();
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [showCode, setShowCode] = useState(false);

  const check = checkReceiverUrl(url);
  const eventTypes = eventTypesFor(mode, picked);
  const input: WebhookFormValues = {
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
    setBusy(true);
    try {
      await send(input);
    } catch (err) {
      const error = asOrkestrError(err);
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
            <span className="block text-xs text-muted-foreground">Every event type there is today.</span>
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
          <AlertTitle>{failureTitle}</AlertTitle>
          <AlertDescription className="text-foreground">{failure}</AlertDescription>
        </Alert>
      ) : null}

      <div>
        <Button type="button" variant="ghost" size="sm" aria-expanded={showCode} onClick={() => setShowCode(!showCode)}>
          {showCode ? "Hide code" : "Show code"}
        </Button>
        {showCode ? (
          <div className="mt-2">
            <CodeTabs snippets={code(input)} testId={codeTestId} />
          </div>
        ) : null}
      </div>

      <DialogActions cancelDisabled={busy}>
        <Button type="submit" disabled={busy}>
          {busy ? busyLabel : submitLabel}
        </Button>
      </DialogActions>
    </form>
  );
}
