"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { formatDuration, formatMebibytes } from "../../lib/format";
import { errorText } from "../../lib/orkestr/errors";
import type { Volume } from "../../lib/orkestr/schemas/volumes";
import { VOLUME_BUSY_POLL_MS, volumeKeys, volumeMutations, volumeQueries } from "../../lib/queries/volumes";
import { useNow } from "../../lib/use-now";
import { FormField, NativeSelect } from "../sandboxes/create/form-field";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { Button } from "../ui/button";
import { DialogActions, DialogClose } from "../ui/dialog";
import { buttonVariants } from "../ui/button";
import { ActionCode } from "./action-code";
import { HolderLink } from "./holder-link";
import { moveVolumeCode } from "./volume-code";
import { moveOutcome } from "./volume-model";

/**
 * Move a detached volume to another region. The API answers 202 at once (status "moving") and
 * copies in the background; the form then follows the volume itself, re-reading it every second,
 * until it is available again: in the new region (the volume.moved event's moment) or, when the
 * copy failed, back in the old one.
 */
export function MoveForm({
  volume,
  regions,
  baseUrl,
  onDone,
}: {
  volume: Volume;
  regions: readonly string[];
  baseUrl?: string;
  onDone: () => void;
}) {
  const queryClient = useQueryClient();
  const others = regions.filter((r) => r !== volume.region);
  const [region, setRegion] = useState(others[0] ?? "");
  const [started, setStarted] = useState<{ target: string; from: string; at: number } | null>(null);
  const list = useQuery({
    ...volumeQueries.list(),
    refetchInterval: (q) =>
      started &&
      moveOutcome(
        q.state.data?.find((v) => v.id === volume.id),
        started.target,
      ) === "moving"
        ? VOLUME_BUSY_POLL_MS
        : false,
  });
  const live = list.data?.find((v) => v.id === volume.id);
  const outcome = started ? moveOutcome(live, started.target) : null;
  const mutation = useMutation({
    mutationFn: (to: string) => volumeMutations.move(volume.id, to),
    onMutate: (to) => setStarted({ target: to, from: volume.region ?? "?", at: Date.now() }),
    onSuccess: (v) => {
      queryClient.setQueryData<Volume[]>(volumeKeys.list(), (old) => old?.map((x) => (x.id === v.id ? v : x)));
      void queryClient.invalidateQueries({ queryKey: volumeKeys.list() });
    },
    onError: () => setStarted(null),
  });
  const holder = volume.attached_sandbox_id;

  if (started && !mutation.isError) {
    return (
      <div className="flex flex-col gap-4">
        {outcome === "moving" || mutation.isPending ? (
          <MoveProgress volume={live ?? volume} from={started.from} to={started.target} since={started.at} />
        ) : outcome === "moved" ? (
          <Alert variant="success" role="status" data-testid="move-done">
            <AlertTitle>Moved to {started.target}</AlertTitle>
            <AlertDescription>
              {volume.name ?? volume.id} now lives in {started.target}; sandboxes attaching it run there.
            </AlertDescription>
          </Alert>
        ) : outcome === "failed" ? (
          <Alert variant="destructive">
            <AlertTitle>The move to {started.target} did not finish</AlertTitle>
            <AlertDescription>
              The volume is still in {live?.region ?? started.from} with its data as it was. Try again; if it keeps
              failing, the engine&apos;s log says why.
            </AlertDescription>
          </Alert>
        ) : (
          <Alert variant="warning">
            <AlertTitle>The volume is gone</AlertTitle>
            <AlertDescription>
              It was deleted while it moved (its lifetime ended, or someone deleted it).
            </AlertDescription>
          </Alert>
        )}
        <div className="flex justify-end">
          <DialogClose
            className={buttonVariants({ variant: outcome === "moving" ? "outline" : "default" })}
            onClick={onDone}
          >
            {outcome === "moving" ? "Close (it keeps moving)" : "Close"}
          </DialogClose>
        </div>
      </div>
    );
  }

  return (
    <form
      noValidate
      className="flex flex-col gap-4"
      onSubmit={(e) => {
        e.preventDefault();
        if (region && !holder) mutation.mutate(region);
      }}
    >
      {holder ? (
        <Alert variant="warning">
          <AlertTitle>Attached: move it once it is free</AlertTitle>
          <AlertDescription>
            Only a detached volume moves. <HolderLink id={holder} /> holds it now: terminate that sandbox first.
          </AlertDescription>
        </Alert>
      ) : null}
      {others.length === 0 ? (
        <p className="text-sm text-muted-foreground">This API has no other region to move it to.</p>
      ) : (
        <FormField
          id="move-region"
          label="To region"
          hint={`Now in ${volume.region ?? "?"}. The data is copied, then the old copy removed; the volume cannot be attached meanwhile.`}
        >
          {(aria) => (
            <NativeSelect {...aria} value={region} onChange={(e) => setRegion(e.target.value)}>
              {others.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </NativeSelect>
          )}
        </FormField>
      )}
      {mutation.error ? (
        <Alert variant="destructive">
          <AlertTitle>The move did not start</AlertTitle>
          <AlertDescription>{errorText(mutation.error)}</AlertDescription>
        </Alert>
      ) : null}
      <ActionCode what="move this volume" snippets={moveVolumeCode(volume.id, region || "REGION", baseUrl)} />
      <DialogActions>
        <Button type="submit" disabled={!region || !!holder || mutation.isPending}>
          Move volume
        </Button>
      </DialogActions>
    </form>
  );
}

function MoveProgress({ volume, from, to, since }: { volume: Volume; from: string; to: string; since: number }) {
  const now = useNow();
  const size = typeof volume.size_mb === "number" ? formatMebibytes(volume.size_mb) : "its data";
  return (
    <div className="flex flex-col gap-2" data-testid="move-progress">
      <p role="status" className="text-sm font-medium">
        Moving {size} from {from} to {to}…
      </p>
      {/* The API reports no percentage: the bar says it is working, the clock how long. */}
      <div
        role="progressbar"
        aria-label={`Moving ${volume.name ?? volume.id} to ${to}`}
        className="h-1.5 w-full overflow-hidden rounded-full bg-muted"
      >
        <div className="h-full w-1/3 animate-pulse rounded-full bg-primary motion-reduce:animate-none" />
      </div>
      <p className="text-xs text-muted-foreground">
        {now === null ? "" : `${formatDuration(Math.max(0, now - since))} so far. `}
        You can close this: the move goes on, and the list shows it until it is done.
      </p>
    </div>
  );
}
