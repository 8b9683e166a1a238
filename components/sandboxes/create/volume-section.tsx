"use client";

import type { UseQueryResult } from "@tanstack/react-query";
import { useSearchParams } from "next/navigation";
import { useEffect, useRef } from "react";
import type { Volume } from "../../../lib/orkestr/schemas/volumes";
import { Button } from "../../ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../../ui/card";
import { Input } from "../../ui/input";
import { volumeRefusal, type CreateFormState, type FieldErrors } from "./create-request";
import { FieldGroup, FormField, NativeSelect, RadioCard } from "./form-field";
import { errorText } from "../../../lib/orkestr/errors";
import { formatGibibytes } from "../../../lib/format";
import { TeamLink as Link } from "../../layout/team-link";

/** A persistent volume at /persist: none, one of the list (in-use ones disabled, with why), or a new one by name. */
export function VolumeSection({
  state,
  update,
  errors,
  volumes,
}: {
  state: CreateFormState;
  update: <K extends keyof CreateFormState>(key: K, value: CreateFormState[K]) => void;
  errors: FieldErrors;
  volumes: UseQueryResult<Volume[], Error>;
}) {
  const list = volumes.data ?? [];
  const free = list.filter((v) => !volumeRefusal(v));
  // The volumes page's "New sandbox with it" links here with ?volume=<id>: preselect it once the list is in.
  const wanted = useSearchParams().get("volume");
  const preselected = useRef(false);
  useEffect(() => {
    if (!wanted || preselected.current || !volumes.isSuccess) return;
    preselected.current = true;
    const v = volumes.data.find((x) => x.id === wanted || x.name === wanted);
    if (!v || volumeRefusal(v)) return;
    update("volumeChoice", "existing");
    update("volume", v.id);
  }, [wanted, volumes.isSuccess, volumes.data, update]);
  const chosen = state.volume ? list.find((v) => v.id === state.volume || v.name === state.volume) : undefined;
  return (
    <Card>
      <CardHeader>
        <CardTitle>Persistent volume</CardTitle>
        <CardDescription>
          Mounted at /persist: what is written there survives termination. /workspace is scratch space.{" "}
          <Link href="/volumes" className="text-primary underline underline-offset-4">
            Manage volumes
          </Link>
        </CardDescription>
      </CardHeader>
      <CardContent className="flex flex-col gap-4">
        <FieldGroup legend="Volume" errorId="volume-choice-error">
          <div className="grid gap-2 sm:grid-cols-3">
            <RadioCard
              name="volume"
              value="none"
              checked={state.volumeChoice === "none"}
              onChange={() => update("volumeChoice", "none")}
              title="None"
            />
            <RadioCard
              name="volume"
              value="existing"
              checked={state.volumeChoice === "existing"}
              disabled={volumes.isSuccess && list.length === 0}
              onChange={() => update("volumeChoice", "existing")}
              title="An existing volume"
              refusal={
                volumes.isSuccess && list.length === 0
                  ? "You have no volumes yet."
                  : volumes.isSuccess && free.length === 0
                    ? "All your volumes are in use."
                    : null
              }
            />
            <RadioCard
              name="volume"
              value="new"
              checked={state.volumeChoice === "new"}
              onChange={() => update("volumeChoice", "new")}
              title="A new volume"
              description="Created on first use (10 GiB)."
            />
          </div>
        </FieldGroup>
        {volumes.isError && state.volumeChoice === "existing" ? (
          <p role="alert" className="flex flex-wrap items-center gap-2 text-sm text-destructive">
            The volumes could not be listed: {errorText(volumes.error)}
            <Button size="sm" variant="outline" onClick={() => volumes.refetch()}>
              Retry
            </Button>
          </p>
        ) : null}
        {state.volumeChoice === "existing" ? (
          <FormField
            id="volume-pick"
            label="Which volume"
            error={errors.volume}
            hint={
              chosen?.region
                ? `The sandbox runs in ${chosen.region}, where the volume lives. A volume backs one running or paused sandbox at a time.`
                : "A volume backs one running or paused sandbox at a time."
            }
          >
            {(aria) => (
              <NativeSelect {...aria} value={state.volume} onChange={(e) => update("volume", e.target.value)}>
                <option value="">{volumes.isPending ? "Loading volumes…" : "Choose a volume"}</option>
                {list.map((v) => {
                  const refusal = volumeRefusal(v);
                  return (
                    <option key={v.id} value={v.id} disabled={!!refusal}>
                      {v.name ?? v.id}
                      {v.region ? ` · ${v.region}` : ""}
                      {v.size_gb ? ` · ${formatGibibytes(v.size_gb)}` : ""}
                      {refusal ? ` (${refusal.replace(/\.$/, "")})` : ""}
                    </option>
                  );
                })}
              </NativeSelect>
            )}
          </FormField>
        ) : null}
        {state.volumeChoice === "new" ? (
          <FormField
            id="volume-name"
            label="New volume name"
            error={errors.volume}
            hint="Letters, digits, '.', '_' and '-'. It lives in the sandbox's region."
          >
            {(aria) => (
              <Input
                {...aria}
                value={state.newVolumeName}
                onChange={(e) => update("newVolumeName", e.target.value)}
                autoComplete="off"
                spellCheck={false}
                className="font-mono"
              />
            )}
          </FormField>
        ) : null}
      </CardContent>
    </Card>
  );
}
