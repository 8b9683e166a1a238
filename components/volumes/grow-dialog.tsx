"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { errorText } from "../../lib/orkestr/errors";
import type { Volume } from "../../lib/orkestr/schemas/volumes";
import { volumeKeys, volumeMutations } from "../../lib/queries/volumes";
import { FormField } from "../sandboxes/create/form-field";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { Button } from "../ui/button";
import { DialogActions } from "../ui/dialog";
import { Input } from "../ui/input";
import { toast } from "../ui/toast";
import { ActionCode } from "./action-code";
import { HolderLink } from "./holder-link";
import { updateVolumeCode } from "./volume-code";
import { formatGibibytes } from "../../lib/format";
import { growProblem } from "./volume-model";

/** Grow a volume (never shrink): detached only, since the filesystem is resized while unmounted. */
export function GrowForm({
  volume,
  maxGb,
  baseUrl,
  onDone,
}: {
  volume: Volume;
  maxGb: number;
  baseUrl?: string;
  onDone: () => void;
}) {
  const queryClient = useQueryClient();
  const current = volume.size_gb ?? 0;
  const [size, setSize] = useState(String(Math.min(current * 2 || 1, maxGb)));
  const [touched, setTouched] = useState(false);
  const problem = growProblem(current, size, maxGb);
  const mutation = useMutation({
    mutationFn: (sizeGb: number) => volumeMutations.update(volume.id, { size_gb: sizeGb }),
    onSuccess: (v) => {
      void queryClient.invalidateQueries({ queryKey: volumeKeys.all });
      toast.success(`${v.name ?? v.id} is now ${formatGibibytes(v.size_gb)}`);
      onDone();
    },
  });
  const holder = volume.attached_sandbox_id;
  return (
    <form
      noValidate
      className="flex flex-col gap-4"
      onSubmit={(e) => {
        e.preventDefault();
        setTouched(true);
        if (!problem && !holder) mutation.mutate(Number(size));
      }}
    >
      {holder ? (
        <Alert variant="warning">
          <AlertTitle>Attached: grow it once it is free</AlertTitle>
          <AlertDescription>
            The filesystem is resized while unmounted. <HolderLink id={holder} /> holds it now: terminate that sandbox
            first.
          </AlertDescription>
        </Alert>
      ) : null}
      <FormField
        id="grow-size"
        label="New size (GiB)"
        error={touched ? (problem ?? undefined) : undefined}
        hint={`Now ${formatGibibytes(current)}. Up to ${formatGibibytes(maxGb)} on this plan; volumes grow, never shrink.`}
      >
        {(aria) => (
          <Input
            {...aria}
            type="number"
            inputMode="numeric"
            min={current + 1}
            max={maxGb}
            value={size}
            onChange={(e) => {
              setSize(e.target.value);
              setTouched(true);
              if (mutation.isError) mutation.reset();
            }}
            autoFocus
          />
        )}
      </FormField>
      {mutation.error ? (
        <Alert variant="destructive">
          <AlertTitle>The volume was not grown</AlertTitle>
          <AlertDescription>{errorText(mutation.error)}</AlertDescription>
        </Alert>
      ) : null}
      <ActionCode
        what="grow this volume"
        snippets={updateVolumeCode(volume.id, { size_gb: Number(size) > 0 ? Number(size) : current + 1 }, baseUrl)}
      />
      <DialogActions cancelDisabled={mutation.isPending}>
        <Button type="submit" disabled={mutation.isPending || !!holder}>
          {mutation.isPending ? "Growing…" : "Grow volume"}
        </Button>
      </DialogActions>
    </form>
  );
}
