"use client";

import type { ReactNode } from "react";
import { formatMebibytes } from "../../../lib/format";
import type { Limits } from "../../../lib/orkestr/schemas/limits";
import { sizeRefusal, type CreateFormState, type FieldErrors } from "./create-request";
import { DomainListEditor } from "./domain-list-editor";
import { FieldGroup, RadioCard } from "./form-field";
import { KeyValueEditor } from "./key-value-editor";

// The field groups the create form and the fork form (components/snapshots/fork-form.tsx) both ask:
// the same state (CreateFormState), the same choices; each form names its inputs apart, so both
// can share a page and tests find each by its own name.

type Update = <K extends keyof CreateFormState>(key: K, value: CreateFormState[K]) => void;

interface SizeOption {
  size: string;
  cpu: number | null;
  memoryMb: number | null;
}

/** The size menu as the server returns it (never hard-coded), or the three names when it says nothing. */
export function sizeOptions(limits: Limits | null | undefined): SizeOption[] {
  if (limits?.sizes?.length)
    return limits.sizes.map((s) => ({ size: s.size, cpu: s.cpu ?? null, memoryMb: s.memory_mb ?? null }));
  return ["small", "medium", "large"].map((size) => ({ size, cpu: null, memoryMb: null }));
}

/** "2 vCPU · 4 GiB", or nothing when the server did not say. */
function describeSize(s: SizeOption): string | undefined {
  return (
    [s.cpu === null ? "" : `${s.cpu} vCPU`, s.memoryMb === null ? "" : formatMebibytes(s.memoryMb)]
      .filter(Boolean)
      .join(" · ") || undefined
  );
}

/** The sizes the plan offers, each refused with the plan's reason when it cannot be picked. */
export function SizeChoice({
  name,
  limits,
  state,
  update,
  error,
  hint,
  sameAsSnapshot,
}: {
  /** The radio group's name; its error's id is `<name>-error`. */
  name: string;
  limits: Limits | null | undefined;
  state: Pick<CreateFormState, "size">;
  update: Update;
  error?: string;
  hint?: string;
  /** Offer "Same as the snapshot" first (a fork, or a create from a snapshot), described by this when known. */
  sameAsSnapshot?: { description?: string };
}) {
  const sizes = sizeOptions(limits);
  return (
    <FieldGroup legend="Size" error={error} errorId={`${name}-error`} hint={hint}>
      <div
        className={sameAsSnapshot ? "grid gap-2 sm:grid-cols-4" : "grid gap-2 sm:grid-cols-3"}
        data-invalid={error ? true : undefined}
      >
        {sameAsSnapshot ? (
          <RadioCard
            name={name}
            value=""
            checked={state.size === ""}
            onChange={() => update("size", "")}
            title="Same as the snapshot"
            description={sameAsSnapshot.description}
          />
        ) : null}
        {sizes.map((s) => {
          const refusal = sizeRefusal(limits ?? null, s.size);
          return (
            <RadioCard
              key={s.size}
              name={name}
              value={s.size}
              checked={state.size === s.size}
              disabled={!!refusal}
              onChange={(v) => update("size", v)}
              title={<span className="capitalize">{s.size}</span>}
              description={describeSize(s)}
              refusal={refusal}
            />
          );
        })}
      </div>
    </FieldGroup>
  );
}

/**
 * Off / restricted / open egress; `open` can be refused by the plan (`openRefusal` says why).
 * Restricted asks for its allowed domains, starting from the plan's defaults.
 */
export function NetworkChoice({
  name,
  legend,
  state,
  update,
  errors,
  openRefusal,
  defaultDomains,
}: {
  /** The radio group's name; its error's id is `<name>-error`. */
  name: string;
  legend: string;
  state: Pick<CreateFormState, "network" | "allowDomains">;
  update: Update;
  errors: FieldErrors;
  openRefusal?: string | null;
  defaultDomains: readonly string[];
}) {
  const error = errors.network;
  return (
    <>
      <FieldGroup legend={legend} error={error} errorId={`${name}-error`}>
        <div className="grid gap-2 sm:grid-cols-3" data-invalid={error ? true : undefined}>
          <RadioCard
            name={name}
            value="off"
            checked={state.network === "off"}
            onChange={() => update("network", "off")}
            title="Off"
            description="No network stack at all."
          />
          <RadioCard
            name={name}
            value="restricted"
            checked={state.network === "restricted"}
            onChange={() => update("network", "restricted")}
            title="Restricted"
            description="HTTPS to the allowed hosts only."
          />
          <RadioCard
            name={name}
            value="open"
            checked={state.network === "open"}
            disabled={!!openRefusal}
            onChange={() => update("network", "open")}
            title="Open"
            description="Full egress."
            refusal={openRefusal ?? undefined}
          />
        </div>
      </FieldGroup>
      {state.network === "restricted" ? (
        <div className="flex flex-col gap-1.5">
          <p className="text-sm font-medium">Allowed domains</p>
          <p className="text-xs text-muted-foreground">
            This list replaces the default set entirely (still HTTPS-only): keep the registries you need.
          </p>
          <DomainListEditor
            domains={state.allowDomains}
            defaults={defaultDomains}
            onChange={(d) => update("allowDomains", d)}
            error={errors.allow_domains}
          />
        </div>
      ) : null}
    </>
  );
}

/** What happens when the countdown ends: terminate or pause. */
export function CountdownChoice({
  name,
  errorId,
  state,
  update,
  descriptions,
}: {
  name: string;
  errorId: string;
  state: Pick<CreateFormState, "onTimeout">;
  update: Update;
  descriptions?: { kill: string; pause: string };
}) {
  return (
    <FieldGroup legend="When the countdown ends" errorId={errorId}>
      <div className="grid gap-2 sm:grid-cols-2">
        <RadioCard
          name={name}
          value="kill"
          checked={state.onTimeout === "kill"}
          onChange={() => update("onTimeout", "kill")}
          title="Terminate"
          description={descriptions?.kill}
        />
        <RadioCard
          name={name}
          value="pause"
          checked={state.onTimeout === "pause"}
          onChange={() => update("onTimeout", "pause")}
          title="Pause"
          description={descriptions?.pause}
        />
      </div>
    </FieldGroup>
  );
}

/** Env (masked: values are secrets) and metadata, each a key/value list. */
export function EnvAndMetadata({
  state,
  update,
  errors,
  className,
  placeholders,
  metadataHint,
}: {
  state: Pick<CreateFormState, "env" | "metadata">;
  update: Update;
  errors: FieldErrors;
  className: string;
  placeholders: { envKey: string; metadataKey: string; metadataValue: string };
  metadataHint?: ReactNode;
}) {
  return (
    <div className={className}>
      <div className="flex flex-col gap-2">
        <h3 className="text-sm font-medium">Environment variables</h3>
        <KeyValueEditor
          name="env"
          label="Variable"
          rows={state.env}
          onChange={(rows) => update("env", rows)}
          errors={errors}
          secret
          keyPlaceholder={placeholders.envKey}
          valuePlaceholder="value"
        />
      </div>
      <div className="flex flex-col gap-2">
        <h3 className="text-sm font-medium">Metadata</h3>
        {metadataHint ? <p className="text-xs text-muted-foreground">{metadataHint}</p> : null}
        <KeyValueEditor
          name="metadata"
          label="Label"
          rows={state.metadata}
          onChange={(rows) => update("metadata", rows)}
          errors={errors}
          keyPlaceholder={placeholders.metadataKey}
          valuePlaceholder={placeholders.metadataValue}
        />
      </div>
    </div>
  );
}
