"use client";

import { useQuery } from "@tanstack/react-query";
import type { BaseImage, Template } from "../../../lib/orkestr/schemas/templates";
import { snapshotQueries } from "../../../lib/queries/snapshots";
import { templateQueries } from "../../../lib/queries/templates";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../../ui/card";
import type { CreateFormState, FieldErrors } from "./create-request";
import { FieldGroup, FormField, NativeSelect, RadioCard } from "./form-field";
import { errorText } from "../../../lib/orkestr/errors";

interface TemplateOption {
  id: string;
  label: string;
  description: string | null;
  /** Why it cannot be used now, or null. */
  refusal: string | null;
}

/**
 * Built-ins come from GET /base-images (ids, descriptions, whether this server runs them); when a
 * server has no such route, from the templates list's `builtin: true` entries. Custom templates
 * are the rest of that list; only `ready` ones can boot.
 */
function templateOptions(
  baseImages: BaseImage[] | undefined,
  templates: Template[] | undefined,
): { builtin: TemplateOption[]; custom: TemplateOption[] } {
  const builtinFromTemplates = (templates ?? []).filter((t) => t.builtin);
  const builtin: TemplateOption[] = baseImages?.length
    ? baseImages.map((b) => ({
        id: b.id,
        label: b.id,
        description: b.description ?? null,
        refusal: b.available === false ? "Not available on this server." : null,
      }))
    : builtinFromTemplates.map((t) => ({
        id: t.id,
        label: t.id,
        description: (t as { description?: string }).description ?? null,
        refusal: null,
      }));
  const custom: TemplateOption[] = (templates ?? [])
    .filter((t) => !t.builtin)
    .map((t) => ({
      id: t.id,
      label: t.name ? `${t.name} (${t.id})` : t.id,
      description: t.base_image
        ? `Built on ${t.base_image}${t.steps?.length ? `, ${t.steps.length} step${t.steps.length === 1 ? "" : "s"}` : ""}.`
        : null,
      refusal: t.status && t.status !== "ready" ? `Build ${t.status}.` : null,
    }));
  return { builtin, custom };
}

export function SourceSection({
  state,
  update,
  errors,
}: {
  state: CreateFormState;
  update: <K extends keyof CreateFormState>(key: K, value: CreateFormState[K]) => void;
  errors: FieldErrors;
}) {
  const baseImages = useQuery(templateQueries.baseImages());
  const templates = useQuery(templateQueries.list({ include_builtin: true }));
  const snapshots = useQuery(snapshotQueries.list());
  const { builtin, custom } = templateOptions(baseImages.data, templates.data);
  const selected = [...builtin, ...custom].find((t) => t.id === state.template);
  const readySnapshots = (snapshots.data ?? []).filter((s) => !s.status || s.status === "ready");
  const loadingTemplates = baseImages.isPending || templates.isPending;
  const templateLoadError = baseImages.isError && templates.isError ? errorText(templates.error) : null;

  return (
    <Card>
      <CardHeader>
        <CardTitle>What to run</CardTitle>
        <CardDescription>Start from a template, or fork a named snapshot of another sandbox.</CardDescription>
      </CardHeader>
      <CardContent className="flex flex-col gap-4">
        <FieldGroup legend="Start from" errorId="source-error">
          <div className="grid gap-2 sm:grid-cols-2">
            <RadioCard
              name="source"
              value="template"
              checked={state.source === "template"}
              onChange={() => update("source", "template")}
              title="A template"
              description="A built-in image or one of your custom templates."
            />
            <RadioCard
              name="source"
              value="snapshot"
              checked={state.source === "snapshot"}
              disabled={!snapshots.isPending && readySnapshots.length === 0}
              onChange={() => update("source", "snapshot")}
              title="A snapshot (fork)"
              description="Its files (and memory, where the snapshot holds it), then it diverges."
              refusal={
                snapshots.isError
                  ? `Snapshots could not be listed: ${errorText(snapshots.error)}`
                  : !snapshots.isPending && readySnapshots.length === 0
                    ? "No ready snapshots yet."
                    : null
              }
            />
          </div>
        </FieldGroup>

        {state.source === "template" ? (
          <FormField
            id="template"
            label="Template"
            error={
              errors.template ?? (templateLoadError ? `Templates could not be listed: ${templateLoadError}` : undefined)
            }
            hint={loadingTemplates ? "Loading templates…" : (selected?.refusal ?? selected?.description ?? undefined)}
          >
            {(aria) => (
              <NativeSelect {...aria} value={state.template} onChange={(e) => update("template", e.target.value)}>
                {!selected ? <option value={state.template}>{state.template || "Choose a template"}</option> : null}
                <optgroup label="Built-in">
                  {builtin.map((t) => (
                    <option key={t.id} value={t.id} disabled={!!t.refusal}>
                      {t.label}
                      {t.refusal ? ` (${t.refusal.replace(/\.$/, "").toLowerCase()})` : ""}
                    </option>
                  ))}
                </optgroup>
                {custom.length ? (
                  <optgroup label="Custom">
                    {custom.map((t) => (
                      <option key={t.id} value={t.id} disabled={!!t.refusal}>
                        {t.label}
                        {t.refusal ? ` (${t.refusal.replace(/\.$/, "").toLowerCase()})` : ""}
                      </option>
                    ))}
                  </optgroup>
                ) : null}
              </NativeSelect>
            )}
          </FormField>
        ) : (
          <FormField
            id="snapshot"
            label="Snapshot"
            error={errors.snapshot}
            hint={snapshotHint(readySnapshots.find((s) => s.id === state.snapshot))}
          >
            {(aria) => (
              <NativeSelect {...aria} value={state.snapshot} onChange={(e) => update("snapshot", e.target.value)}>
                <option value="">Choose a snapshot</option>
                {readySnapshots.map((s) => (
                  <option key={s.id} value={s.id}>
                    {s.name ? `${s.name} (${s.id})` : s.id}
                    {s.template ? ` · ${s.template}` : ""}
                    {s.region ? ` · ${s.region}` : ""}
                  </option>
                ))}
              </NativeSelect>
            )}
          </FormField>
        )}
      </CardContent>
    </Card>
  );
}

/** What a fork of `snapshot` starts with, as its snapshot says (the local engine copies files only). */
function snapshotHint(snapshot: { memory_captured?: boolean | null } | undefined): string {
  const where = "The fork runs the snapshot's template in the snapshot's region.";
  if (snapshot?.memory_captured === false) return `${where} Files only: its processes start afresh.`;
  if (snapshot?.memory_captured === true) return `${where} Its memory too: processes resume where they were.`;
  return where;
}
