"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { toMs } from "../../lib/format";
import { errorText } from "../../lib/orkestr/errors";
import type { UpdateVolumeBody, Volume } from "../../lib/orkestr/schemas/volumes";
import { volumeKeys, volumeMutations } from "../../lib/queries/volumes";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { Button } from "../ui/button";
import { DialogActions } from "../ui/dialog";
import { toast } from "../ui/toast";
import { ActionCode } from "./action-code";
import { LifetimeField } from "./lifetime-input";
import { updateVolumeCode } from "./volume-code";
import { lifetimeDeadline, lifetimeFields, lifetimeInputOf, lifetimeLabel } from "./volume-model";

/** Set, change or clear a volume's max lifetime (allowed attached or not: it only moves the deadline). */
export function LifetimeForm({ volume, baseUrl, onDone }: { volume: Volume; baseUrl?: string; onDone: () => void }) {
  const queryClient = useQueryClient();
  const [value, setValue] = useState(() => lifetimeInputOf(volume));
  const [touched, setTouched] = useState(false);
  const fields = lifetimeFields(value);
  const mutation = useMutation({
    mutationFn: (body: UpdateVolumeBody) => volumeMutations.update(volume.id, body),
    onSuccess: (v) => {
      void queryClient.invalidateQueries({ queryKey: volumeKeys.all });
      const label = lifetimeLabel(v);
      toast.success(label ? `${v.name ?? v.id} now lives at most ${label}` : `${v.name ?? v.id} is kept until deleted`);
      onDone();
    },
  });
  const current = lifetimeLabel(volume);
  const body: UpdateVolumeBody = fields.ok ? fields.fields : { max_lifetime_days: null };
  return (
    <form
      noValidate
      className="flex flex-col gap-4"
      onSubmit={(e) => {
        e.preventDefault();
        setTouched(true);
        if (fields.ok) mutation.mutate(fields.fields);
      }}
    >
      <p className="text-sm">
        Now: <span className="font-medium">{current ? `at most ${current}` : "kept until deleted"}</span>
      </p>
      <LifetimeField
        id="lifetime-edit"
        value={value}
        onChange={(next) => {
          setValue(next);
          setTouched(true);
          if (mutation.isError) mutation.reset();
        }}
        error={touched && !fields.ok ? fields.error : undefined}
        deadline={lifetimeDeadline(toMs(volume.created_at), value)}
      />
      {mutation.error ? (
        <Alert variant="destructive">
          <AlertTitle>The lifetime was not changed</AlertTitle>
          <AlertDescription>{errorText(mutation.error)}</AlertDescription>
        </Alert>
      ) : null}
      <ActionCode
        what={value.unit === "none" ? "clear the lifetime" : "set this lifetime"}
        snippets={updateVolumeCode(volume.id, body, baseUrl)}
      />
      <DialogActions cancelDisabled={mutation.isPending}>
        <Button type="submit" disabled={mutation.isPending}>
          {mutation.isPending ? "Saving…" : value.unit === "none" ? "Clear lifetime" : "Set lifetime"}
        </Button>
      </DialogActions>
    </form>
  );
}
