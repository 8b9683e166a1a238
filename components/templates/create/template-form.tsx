"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useRef, useState, type FormEvent } from "react";
import { templateHref } from "../../../lib/resource-links";
import { errorText, OrkestrError } from "../../../lib/orkestr/errors";
import type { Template } from "../../../lib/orkestr/schemas/templates";
import { templateKeys, templateQueries } from "../../../lib/queries/templates";
import { templateMutations, templatePageQueries } from "../../../lib/queries/template-pages";
import { FieldError, FormField, NativeSelect } from "../../sandboxes/create/form-field";
import { newIdempotencyKey } from "../../sandboxes/create/idempotency-key";
import { KeyValueEditor } from "../../sandboxes/create/key-value-editor";
import { Alert, AlertDescription, AlertTitle } from "../../ui/alert";
import { Button } from "../../ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../../ui/card";
import { CodeTabs } from "../../ui/code-tabs";
import { Input } from "../../ui/input";
import { Skeleton } from "../../ui/skeleton";
import { toast } from "../../ui/toast";
import { createTemplateCode } from "../template-code";
import { StepsEditor } from "./steps-editor";
import { buildTemplateRequest, MAX_STEPS, parseSteps, stateFrom, type TemplateFormState } from "./template-request";
import { useTeamRouter } from "../../layout/team-link";

/**
 * /templates/new: waits for the base images (and, for "Edit", the template it starts from and the
 * names already taken), then renders the form once with those as its initial values.
 */
export function TemplateForm({ baseUrl, from }: { baseUrl: string; from: string | null }) {
  const images = useQuery(templateQueries.baseImages());
  const source = useQuery({ ...templatePageQueries.detail(from ?? ""), enabled: from !== null });
  const existing = useQuery(templateQueries.list({ include_builtin: false }));
  const waiting = images.isPending || (from !== null && source.isPending) || existing.isPending;
  if (waiting) {
    return (
      <div role="status" aria-label="Loading the form" className="flex flex-col gap-4">
        <Skeleton className="h-40 w-full" />
        <Skeleton className="h-56 w-full" />
      </div>
    );
  }
  const available = (images.data ?? []).filter((i) => i.available !== false);
  const defaultBase = available.find((i) => i.id === "python-3.12")?.id ?? available[0]?.id ?? "";
  const taken = new Set((existing.data ?? []).map((t) => t.name ?? t.id));
  return (
    <div className="flex flex-col gap-4">
      {images.isError ? (
        <Alert variant="warning">
          <AlertTitle className="font-semibold">The base images could not be listed</AlertTitle>
          <AlertDescription className="text-foreground">
            {errorText(images.error)} Type the base image&apos;s id; the server checks it.
          </AlertDescription>
        </Alert>
      ) : null}
      {from !== null && source.isError ? (
        <Alert variant="warning">
          <AlertTitle>Template {from} could not be read</AlertTitle>
          <AlertDescription className="text-foreground">
            {errorText(source.error)} The form starts empty instead.
          </AlertDescription>
        </Alert>
      ) : null}
      <TemplateFormBody
        baseUrl={baseUrl}
        initial={stateFrom(source.data ?? null, taken, defaultBase)}
        source={source.data ?? null}
        images={images.data ?? null}
      />
    </div>
  );
}

function TemplateFormBody({
  baseUrl,
  initial,
  source,
  images,
}: {
  baseUrl: string;
  initial: TemplateFormState;
  source: Template | null;
  images: { id: string; description?: string | null; available?: boolean | null }[] | null;
}) {
  const router = useTeamRouter();
  const queryClient = useQueryClient();
  const [state, setState] = useState(initial);
  const [showErrors, setShowErrors] = useState(false);
  const [serverErrors, setServerErrors] = useState<Record<string, string>>({});
  const [showCode, setShowCode] = useState(false);
  const idempotency = useRef<{ key: string; body: string } | null>(null);
  const stepsLabel = useId();
  const request = buildTemplateRequest(state);
  const errors = showErrors ? { ...request.errors, ...serverErrors } : serverErrors;
  const update = <K extends keyof TemplateFormState>(key: K, value: TemplateFormState[K]) => {
    setState((s) => ({ ...s, [key]: value }));
    setServerErrors((e) => (Object.keys(e).length ? {} : e));
  };

  const create = useMutation({
    mutationFn: ({ body, key }: { body: typeof request.body; key: string }) => templateMutations.create(body, key),
    onSuccess: (template) => {
      void queryClient.invalidateQueries({ queryKey: templateKeys.all });
      queryClient.setQueryData(templateKeys.detail(template.id), template);
      toast.success(`Template ${template.name ?? template.id} queued`, { description: "Its build log follows." });
      router.push(templateHref(template.id));
    },
    onError: (error) => {
      // The server's word on a field goes next to that field.
      if (error instanceof OrkestrError) {
        if (error.code === "template_name_taken") setServerErrors({ name: error.detail });
        else if (error.code === "base_image_not_found") setServerErrors({ base_image: error.detail });
        else if (/\bname\b/.test(error.detail) && error.status === 400) setServerErrors({ name: error.detail });
      }
    },
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setShowErrors(true);
    if (Object.keys(request.errors).length) {
      const first = Object.keys(request.errors)[0]!;
      const id = first.startsWith("env.")
        ? `env-${first.slice(4)}-key`
        : first === "steps"
          ? "template-steps"
          : `template-${first}`;
      document.getElementById(id)?.focus();
      return;
    }
    // The same request retried (after a timeout) reuses its key: the server answers with the first template.
    const text = JSON.stringify(request.body);
    if (idempotency.current?.body !== text) idempotency.current = { key: newIdempotencyKey(), body: text };
    create.mutate({ body: request.body, key: idempotency.current.key });
  };

  const envNames = Object.keys(request.body.env ?? {});
  const stepCount = parseSteps(state.steps).length;
  const knownImage = images?.some((i) => i.id === state.baseImage);

  return (
    <form onSubmit={submit} noValidate className="flex flex-col gap-4" aria-label="Create a template">
      {source ? (
        <Alert variant="default" role="status">
          <AlertTitle>A new template from {source.name ?? source.id}</AlertTitle>
          <AlertDescription className="text-foreground">
            Templates are immutable, so this builds a new one; {source.name ?? source.id} stays as it is.
            {((source as { env_keys?: string[] }).env_keys?.length ?? 0) > 0
              ? " Its environment values are never sent back by the API: enter them again."
              : ""}
          </AlertDescription>
        </Alert>
      ) : null}
      <Card>
        <CardHeader>
          <CardTitle>Template</CardTitle>
          <CardDescription>A name, and the image the steps run on.</CardDescription>
        </CardHeader>
        <CardContent className="flex flex-col gap-4">
          <FormField
            id="template-name"
            label="Name"
            hint="Sandboxes can start from it by this name or by its id."
            error={errors.name}
          >
            {(aria) => (
              <Input
                {...aria}
                value={state.name}
                onChange={(e) => update("name", e.target.value)}
                autoComplete="off"
                spellCheck={false}
                placeholder="python-with-requests"
                className="font-mono"
              />
            )}
          </FormField>
          <FormField id="template-base_image" label="Base image" error={errors.base_image}>
            {(aria) =>
              images && images.length ? (
                <NativeSelect {...aria} value={state.baseImage} onChange={(e) => update("baseImage", e.target.value)}>
                  {!knownImage ? (
                    <option value={state.baseImage}>{state.baseImage || "Choose a base image"}</option>
                  ) : null}
                  {images.map((i) => (
                    <option key={i.id} value={i.id} disabled={i.available === false}>
                      {i.id}
                      {i.description ? ` · ${i.description}` : ""}
                      {i.available === false ? " (not available here)" : ""}
                    </option>
                  ))}
                </NativeSelect>
              ) : (
                <Input
                  {...aria}
                  value={state.baseImage}
                  onChange={(e) => update("baseImage", e.target.value)}
                  className="font-mono"
                />
              )
            }
          </FormField>
        </CardContent>
      </Card>

      <Card>
        <CardHeader>
          <CardTitle id={stepsLabel}>Steps</CardTitle>
          <CardDescription id="template-steps-hint">
            One shell command per line, run in order as root in a build sandbox; blank lines are skipped. A step that
            exits with a code other than 0 stops the build. At most {MAX_STEPS}.
          </CardDescription>
        </CardHeader>
        <CardContent className="flex flex-col gap-2">
          <StepsEditor
            id="template-steps"
            labelId={stepsLabel}
            describedBy={errors.steps ? "template-steps-hint template-steps-error" : "template-steps-hint"}
            invalid={Boolean(errors.steps)}
            value={state.steps}
            onChange={(v) => update("steps", v)}
          />
          <p className="text-xs text-muted-foreground" aria-live="polite">
            {stepCount === 0
              ? "No steps: the template is the base image as it is."
              : `${stepCount} step${stepCount === 1 ? "" : "s"}.`}
          </p>
          <FieldError id="template-steps-error" error={errors.steps} />
        </CardContent>
      </Card>

      <Card>
        <CardHeader>
          <CardTitle>Environment</CardTitle>
          <CardDescription>
            Set for every step, and the default for sandboxes started from the template (a sandbox&apos;s own env wins).
            Only the names are ever shown again.
          </CardDescription>
        </CardHeader>
        <CardContent>
          <KeyValueEditor
            name="env"
            label="Variable"
            rows={state.env}
            onChange={(rows) => update("env", rows)}
            errors={errors}
            secret
            keyPlaceholder="PIP_INDEX_URL"
            valuePlaceholder="value"
          />
        </CardContent>
      </Card>

      {create.isError ? (
        <Alert variant="destructive">
          <AlertTitle className="font-semibold">The template was not created</AlertTitle>
          <AlertDescription className="text-foreground">{errorText(create.error)}</AlertDescription>
        </Alert>
      ) : null}

      <div className="flex flex-wrap items-center gap-2">
        <Button type="submit" disabled={create.isPending}>
          {create.isPending ? "Queuing the build…" : "Create template"}
        </Button>
        <Button type="button" variant="outline" aria-expanded={showCode} onClick={() => setShowCode((s) => !s)}>
          {showCode ? "Hide code" : "Show code"}
        </Button>
      </div>
      {showCode ? (
        <CodeTabs
          snippets={createTemplateCode(
            { name: request.body.name, base_image: request.body.base_image, steps: request.body.steps ?? [], envNames },
            baseUrl,
          )}
          testId="create-code"
        />
      ) : null}
    </form>
  );
}
