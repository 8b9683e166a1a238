"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { formatMicro } from "../../lib/format";
import { errorText } from "../../lib/orkestr/errors";
import { capsKeys, capsMutations } from "../../lib/queries/caps";
import { teamQueries } from "../../lib/queries/team";
import { CAP_ACTIONS, CAP_WINDOWS } from "../../lib/usage/caps";
import {
  CAP_ACTION_TEXT,
  CAP_WINDOW_TEXT,
  capDraft,
  capSubject,
  readCapDraft,
  type CapDraft,
} from "../../lib/usage/caps-form";
import type { CapView } from "../../lib/usage/caps-view";
import { cn } from "../../lib/utils";
import { Button } from "../ui/button";
import { Dialog, DialogActions } from "../ui/dialog";
import { Input } from "../ui/input";
import { Label } from "../ui/label";

/**
 * Sets a spend cap (PUT /api/usage/caps): for the team or a member, per UTC month or day, an amount
 * in EUR (whole cents) and what happens when it is reached. Editing keeps the subject and window
 * (they are what a cap is); setting one for a subject and window that has a cap replaces it. The
 * server's refusal (e.g. 422 cap_conflict) is shown in the form.
 */
export default function CapFormDialog({
  cap,
  caps,
  onClose,
}: {
  /** The cap being edited, or null for a new one. */
  cap: CapView | null;
  caps: CapView[];
  onClose: () => void;
}) {
  const ids = useId();
  const client = useQueryClient();
  const [draft, setDraft] = useState<CapDraft>(() => capDraft(cap ?? undefined));
  const [amountProblem, setAmountProblem] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  const members = useQuery({ ...teamQueries.members(), enabled: cap === null });
  const existing = cap ? null : caps.find((c) => (c.user_id ?? "") === draft.subject && c.window === draft.window);
  const teamCap = caps.find((c) => c.user_id === null && c.window === draft.window);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const read = readCapDraft(draft);
    if (!read.ok) return setAmountProblem(read.problem);
    setAmountProblem(null);
    setFailure(null);
    setPending(true);
    try {
      client.setQueryData(capsKeys.list(), await capsMutations.set(read.body));
      void client.invalidateQueries({ queryKey: capsKeys.all });
      onClose();
    } catch (err) {
      setFailure(errorText(err, "The cap could not be saved."));
    } finally {
      setPending(false);
    }
  };

  const set = (change: Partial<CapDraft>) => {
    setDraft({ ...draft, ...change });
    setFailure(null);
  };

  return (
    <Dialog
      open
      onOpenChange={(open) => (open ? undefined : onClose())}
      title={
        cap ? `Edit the ${cap.window === "month" ? "monthly" : "daily"} cap of ${capSubject(cap)}` : "Set a spend cap"
      }
      description="The change takes effect at the job's next run; a cap set below what is already spent blocks at once."
      className="max-w-xl"
    >
      <form onSubmit={submit} className="flex flex-col gap-4" aria-label="Spend cap" noValidate>
        {cap ? null : (
          <div className="flex flex-col gap-1.5">
            <Label htmlFor={`${ids}-subject`}>For</Label>
            <select
              id={`${ids}-subject`}
              className="h-9 rounded-md border border-input bg-background px-2 text-sm"
              value={draft.subject}
              onChange={(e) => set({ subject: e.target.value })}
              aria-describedby={`${ids}-subject-hint`}
            >
              <option value="">The team (everyone&apos;s spending together)</option>
              {(members.data?.members ?? [])
                .filter((m) => !m.disabled)
                .map((m) => (
                  <option key={m.user_id} value={m.user_id}>
                    {m.name ? `${m.name} (${m.email})` : m.email}
                  </option>
                ))}
            </select>
            <p id={`${ids}-subject-hint`} className="text-xs text-muted-foreground">
              {members.isPending
                ? "Loading the team's members…"
                : members.isError
                  ? `The members could not be read (${errorText(members.error, "try again later")}): only the team's cap can be set now.`
                  : "A member's cap counts the sandboxes they create, and can be no higher than the team's."}
            </p>
          </div>
        )}

        {cap ? null : (
          <fieldset className="flex flex-col gap-1.5">
            <legend className="mb-1.5 text-sm font-medium">Window</legend>
            <div className="flex flex-wrap gap-2">
              {CAP_WINDOWS.map((w) => (
                <label
                  key={w}
                  className={cn(
                    "flex cursor-pointer items-center gap-2 rounded-md border px-3 py-2 text-sm has-[:focus-visible]:ring-2 has-[:focus-visible]:ring-ring",
                    draft.window === w ? "border-primary bg-primary/5" : "border-input",
                  )}
                >
                  <input
                    type="radio"
                    name={`${ids}-window`}
                    value={w}
                    checked={draft.window === w}
                    onChange={() => set({ window: w })}
                    className="size-4 accent-primary"
                  />
                  {CAP_WINDOW_TEXT[w]}
                </label>
              ))}
            </div>
          </fieldset>
        )}

        <div className="flex flex-col gap-1.5">
          <Label htmlFor={`${ids}-amount`}>Limit (EUR)</Label>
          <Input
            id={`${ids}-amount`}
            inputMode="decimal"
            autoComplete="off"
            value={draft.amount}
            onChange={(e) => set({ amount: e.target.value })}
            placeholder="100.00"
            className="max-w-48"
            aria-invalid={amountProblem ? true : undefined}
            aria-describedby={`${ids}-amount-hint${amountProblem ? ` ${ids}-amount-error` : ""}`}
          />
          <p id={`${ids}-amount-hint`} className="text-xs text-muted-foreground">
            In whole cents, per {draft.window === "month" ? "calendar month" : "day"} (UTC).
            {draft.subject !== "" && teamCap ? ` The team's is ${formatMicro(teamCap.limit_micro)}.` : ""}
          </p>
          {amountProblem ? (
            <p id={`${ids}-amount-error`} className="text-xs text-destructive">
              {amountProblem}
            </p>
          ) : null}
        </div>

        <fieldset className="flex flex-col gap-2">
          <legend className="mb-1.5 text-sm font-medium">When it is reached</legend>
          {CAP_ACTIONS.map((a) => (
            <label
              key={a}
              className={cn(
                "flex cursor-pointer items-start gap-3 rounded-md border p-3 text-sm has-[:focus-visible]:ring-2 has-[:focus-visible]:ring-ring",
                draft.action === a ? "border-primary bg-primary/5" : "border-input",
              )}
            >
              <input
                type="radio"
                name={`${ids}-action`}
                value={a}
                checked={draft.action === a}
                onChange={() => set({ action: a })}
                aria-describedby={`${ids}-action-${a}`}
                className="mt-0.5 size-4 accent-primary"
              />
              <span className="flex flex-col gap-0.5">
                <span className="font-medium">{CAP_ACTION_TEXT[a].label}</span>
                <span id={`${ids}-action-${a}`} className="text-xs text-muted-foreground">
                  {CAP_ACTION_TEXT[a].explain}
                </span>
              </span>
            </label>
          ))}
        </fieldset>

        {existing ? (
          <p className="text-sm text-muted-foreground" role="status">
            {capSubject(existing)} has a {existing.window === "month" ? "monthly" : "daily"} cap of{" "}
            {formatMicro(existing.limit_micro)} already: saving replaces it.
          </p>
        ) : null}
        {failure ? (
          <p role="alert" className="text-sm text-destructive" data-testid="spend-cap-error">
            {failure}
          </p>
        ) : null}
        <DialogActions cancelDisabled={pending}>
          <Button type="submit" disabled={pending}>
            {pending ? "Saving…" : cap ? "Save cap" : "Set cap"}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}
