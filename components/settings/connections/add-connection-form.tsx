"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId, useRef, useState, type FormEvent } from "react";
import { OrkestrError, errorText } from "../../../lib/orkestr/errors";
import { connectionKeys, connectionMutations } from "../../../lib/queries/connections";
import { Alert, AlertDescription } from "../../ui/alert";
import { Button } from "../../ui/button";
import { Input } from "../../ui/input";
import { Label } from "../../ui/label";
import { TokenInput } from "./token-input";

const FIELDS = ["name", "base_url", "token"] as const;
type Field = (typeof FIELDS)[number];

/**
 * Adds a named orkestr connection. The server checks the URL (SSRF) and the token (a live limits
 * call) before it stores anything; each refusal lands on its field. The token is a password input
 * and is cleared once the form is sent, whatever the answer.
 */
export function AddConnectionForm({ onAdded }: { onAdded?: () => void }) {
  const queryClient = useQueryClient();
  const formRef = useRef<HTMLFormElement>(null);
  const [fieldErrors, setFieldErrors] = useState<Partial<Record<Field, string>>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const id = useId();
  const errId = (f: Field) => `${id}-${f}-error`;

  const create = useMutation({
    mutationFn: connectionMutations.create,
    onSuccess: async () => {
      formRef.current?.reset();
      setFieldErrors({});
      setFormError(null);
      await queryClient.invalidateQueries({ queryKey: connectionKeys.all });
      onAdded?.();
    },
    onError: (error) => {
      const errors: Partial<Record<Field, string>> = {};
      if (error instanceof OrkestrError) for (const f of FIELDS) errors[f] = error.forField(f) ?? undefined;
      const onAField = FIELDS.some((f) => errors[f]);
      setFieldErrors(errors);
      setFormError(onAField ? null : errorText(error));
      const first = FIELDS.find((f) => errors[f]);
      if (first) formRef.current?.querySelector<HTMLInputElement>(`[name="${first}"]`)?.focus();
    },
  });

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (create.isPending) return;
    const form = new FormData(event.currentTarget);
    const token = String(form.get("token") ?? "");
    // The secret stays in the page no longer than needed.
    const tokenInput = event.currentTarget.querySelector<HTMLInputElement>('[name="token"]');
    if (tokenInput) tokenInput.value = "";
    create.mutate({
      name: String(form.get("name") ?? "").trim(),
      base_url: String(form.get("base_url") ?? "").trim(),
      token,
    });
  }

  const field = (f: Field, label: string, input: React.ReactNode, hint?: string) => (
    <div className="flex flex-col gap-2">
      <Label htmlFor={`${id}-${f}`}>{label}</Label>
      {input}
      {hint && !fieldErrors[f] ? <p className="text-xs text-muted-foreground">{hint}</p> : null}
      {fieldErrors[f] ? (
        <p id={errId(f)} className="text-sm text-destructive" data-testid={`error-${f}`}>
          {fieldErrors[f]}
        </p>
      ) : null}
    </div>
  );
  const aria = (f: Field) => ({
    "aria-invalid": fieldErrors[f] ? true : undefined,
    "aria-describedby": fieldErrors[f] ? errId(f) : undefined,
  });

  return (
    <form
      ref={formRef}
      method="post"
      onSubmit={onSubmit}
      aria-busy={create.isPending}
      aria-label="Add a connection"
      className="flex flex-col gap-4"
    >
      {formError ? (
        <Alert variant="destructive">
          <AlertDescription className="text-foreground">{formError}</AlertDescription>
        </Alert>
      ) : null}
      <div className="grid gap-4 md:grid-cols-2">
        {field(
          "name",
          "Name",
          <Input
            id={`${id}-name`}
            name="name"
            required
            maxLength={80}
            placeholder="Production"
            autoComplete="off"
            {...aria("name")}
          />,
        )}
        {field(
          "base_url",
          "Base URL",
          <Input
            id={`${id}-base_url`}
            name="base_url"
            type="url"
            required
            placeholder="https://api.orkestr.eu"
            autoComplete="off"
            spellCheck={false}
            {...aria("base_url")}
          />,
          "The orkestr API, without /v1.",
        )}
      </div>
      {field(
        "token",
        "API token",
        <TokenInput id={`${id}-token`} {...aria("token")} />,
        "Checked against the API before it is saved, then stored encrypted and shown only as ork_…abcd.",
      )}
      <div>
        <Button type="submit" disabled={create.isPending}>
          {create.isPending ? "Checking…" : "Add connection"}
        </Button>
      </div>
    </form>
  );
}
