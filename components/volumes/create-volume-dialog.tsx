"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useRef, useState } from "react";
import { errorText, OrkestrError } from "../../lib/orkestr/errors";
import type { CreateVolumeBody, Volume } from "../../lib/orkestr/schemas/volumes";
import { volumeKeys, volumeMutations } from "../../lib/queries/volumes";
import { newIdempotencyKey } from "../sandboxes/create/idempotency-key";
import { FormField, NativeSelect } from "../sandboxes/create/form-field";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { Button } from "../ui/button";
import { Dialog, DialogActions } from "../ui/dialog";
import { Input } from "../ui/input";
import { toast } from "../ui/toast";
import { ActionCode } from "./action-code";
import { LifetimeField } from "./lifetime-input";
import { createVolumeCode } from "./volume-code";
import { formatGibibytes } from "../../lib/format";
import { buildCreateBody, DEFAULT_VOLUME_GB, type CreateVolumeForm, type VolumeFieldErrors } from "./volume-model";

const EMPTY: CreateVolumeForm = {
  name: "",
  sizeGb: String(DEFAULT_VOLUME_GB),
  region: "",
  lifetime: { unit: "none", amount: "7" },
};

/** Which field a refusal of the API is about, so it shows under that field. */
function fieldOf(error: OrkestrError): keyof VolumeFieldErrors | null {
  if (error.code === "volume_name_taken") return "name";
  if (error.code === "region_unavailable") return "region";
  if (error.code === "plan_limit" && /GB/.test(error.detail)) return "size";
  return null;
}

/** New volume: name, size (up to the plan's), region (the API's list), max lifetime; and the same as code. */
export function CreateVolumeDialog({
  open,
  onOpenChange,
  regions,
  maxGb,
  existing,
  baseUrl,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  regions: readonly string[];
  maxGb: number;
  existing: readonly Volume[];
  baseUrl?: string;
}) {
  const queryClient = useQueryClient();
  const [form, setForm] = useState<CreateVolumeForm>(EMPTY);
  const [showErrors, setShowErrors] = useState(false);
  const key = useRef<{ key: string; body: string } | null>(null);
  const request = buildCreateBody(form, {
    maxGb,
    regions,
    existingNames: existing.map((v) => v.name ?? ""),
  });
  const mutation = useMutation({
    mutationFn: (body: CreateVolumeBody) => {
      // The same request again (a retry after a timeout) reuses its key: the API answers with the
      // volume it made the first time instead of refusing the name as taken.
      const text = JSON.stringify(body);
      if (key.current?.body !== text) key.current = { key: newIdempotencyKey(), body: text };
      return volumeMutations.create(body, key.current.key);
    },
    onSuccess: (volume) => {
      queryClient.setQueryData<Volume[]>(volumeKeys.list(), (old) => [
        volume,
        ...(old ?? []).filter((v) => v.id !== volume.id),
      ]);
      void queryClient.invalidateQueries({ queryKey: volumeKeys.all });
      toast.success(`Created volume ${volume.name ?? volume.id}`, {
        description: `${formatGibibytes(volume.size_gb)} in ${volume.region ?? "its region"}. Attach it when you create a sandbox.`,
      });
      key.current = null;
      setForm(EMPTY);
      setShowErrors(false);
      onOpenChange(false);
    },
  });
  const serverError = mutation.error instanceof OrkestrError ? mutation.error : null;
  const serverField = serverError ? fieldOf(serverError) : null;
  const errors: VolumeFieldErrors = {
    ...(showErrors ? request.errors : {}),
    ...(serverError && serverField ? { [serverField]: serverError.detail } : {}),
  };
  const update = (next: Partial<CreateVolumeForm>) => {
    setForm((f) => ({ ...f, ...next }));
    if (mutation.isError) mutation.reset();
  };
  const preview: CreateVolumeBody = request.body ?? {
    name: form.name.trim() || "my-volume",
    size_gb: Number(form.sizeGb) || DEFAULT_VOLUME_GB,
  };

  return (
    <Dialog
      open={open}
      onOpenChange={(o) => {
        if (!o && mutation.isPending) return;
        onOpenChange(o);
      }}
      title="New volume"
      description="A disk that outlives sandboxes: attach it when you create one and it is mounted at /persist."
      className="max-w-xl"
    >
      <form
        noValidate
        className="flex flex-col gap-4"
        onSubmit={(e) => {
          e.preventDefault();
          setShowErrors(true);
          if (request.body) mutation.mutate(request.body);
        }}
      >
        <FormField
          id="volume-name"
          label="Name"
          error={errors.name}
          hint="Letters, digits, '.', '_' and '-'; unique among your volumes."
        >
          {(aria) => (
            <Input
              {...aria}
              value={form.name}
              onChange={(e) => update({ name: e.target.value })}
              autoComplete="off"
              spellCheck={false}
              className="font-mono"
              autoFocus
            />
          )}
        </FormField>
        <div className="grid gap-4 sm:grid-cols-2">
          <FormField
            id="volume-size"
            label="Size (GiB)"
            error={errors.size}
            hint={`1 to ${formatGibibytes(maxGb)} on this plan. It can grow later, never shrink.`}
          >
            {(aria) => (
              <Input
                {...aria}
                type="number"
                inputMode="numeric"
                min={1}
                max={maxGb}
                value={form.sizeGb}
                onChange={(e) => update({ sizeGb: e.target.value })}
              />
            )}
          </FormField>
          <FormField id="volume-region" label="Region" error={errors.region} hint="Sandboxes attaching it run there.">
            {(aria) => (
              <NativeSelect {...aria} value={form.region} onChange={(e) => update({ region: e.target.value })}>
                <option value="">{regions.length ? `Default (${regions[0]})` : "Default"}</option>
                {regions.map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </NativeSelect>
            )}
          </FormField>
        </div>
        <LifetimeField
          id="volume-lifetime"
          value={form.lifetime}
          onChange={(lifetime) => update({ lifetime })}
          error={errors.lifetime}
          // A new volume's lifetime starts now.
          deadline={null}
        />
        {serverError && !serverField ? (
          <Alert variant="destructive">
            <AlertTitle>The volume was not created</AlertTitle>
            <AlertDescription>{errorText(serverError)}</AlertDescription>
          </Alert>
        ) : mutation.error && !serverError ? (
          <Alert variant="destructive">
            <AlertTitle>The volume was not created</AlertTitle>
            <AlertDescription>{errorText(mutation.error)}</AlertDescription>
          </Alert>
        ) : null}
        <ActionCode what="create this volume" snippets={createVolumeCode(preview, baseUrl)} />
        <DialogActions cancelDisabled={mutation.isPending}>
          <Button type="submit" disabled={mutation.isPending}>
            {mutation.isPending ? "Creating…" : "Create volume"}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}
