"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { toast } from "../../ui/toast";
import type { Sandbox } from "../../../lib/orkestr/schemas/sandboxes";
import { useLifecycleAction } from "../../../lib/queries/sandbox-lifecycle";
import { sandboxKeys } from "../../../lib/queries/sandboxes";
import { Badge } from "../../ui/badge";
import { Button } from "../../ui/button";
import { Dialog, DialogActions, DialogClose } from "../../ui/dialog";
import { ACTION_TEXT, appliesTo, plural, runBulk, type BulkAction, type BulkResult } from "./bulk";

const SHOWN_IDS = 8;

/**
 * The bar above the table while rows are selected: pause, resume or terminate them all after a
 * confirmation that names the count, through the one lifecycle hook (an optimistic update that each
 * failure rolls back), and
 * a result per sandbox when any failed. Always mounted: the results outlive the selection (a
 * sandbox terminated elsewhere drops out of the list while its failure is being shown).
 */
export function BulkActions({
  selected,
  onSettled,
  onClear,
}: {
  selected: readonly Sandbox[];
  onSettled: (failedIds: string[]) => void;
  onClear: () => void;
}) {
  const queryClient = useQueryClient();
  // The confirmation names exact sandboxes: the ones applicable when it opened are the ones acted on,
  // even if a refresh changes the list meanwhile (a sandbox terminated elsewhere then fails, and says so).
  const [confirming, setConfirming] = useState<{ action: BulkAction; rows: Sandbox[]; skipped: number } | null>(null);
  const [running, setRunning] = useState(false);
  const [results, setResults] = useState<{ action: BulkAction; results: BulkResult[] } | null>(null);

  const targets = (action: BulkAction) => selected.filter((s) => appliesTo(action, s.status));

  const open = (action: BulkAction) => {
    const rows = targets(action);
    setConfirming({ action, rows, skipped: selected.length - rows.length });
  };

  const lifecycle = useLifecycleAction({ bulk: true });
  const run = async (action: BulkAction, rows: readonly Sandbox[]) => {
    const ids = rows.map((r) => r.id);
    setRunning(true);
    await queryClient.cancelQueries({ queryKey: sandboxKeys.lists() });
    const results = await runBulk(ids, async (id) => void (await lifecycle.mutateAsync({ action, id })));
    const failed = results.filter((r) => !r.ok).map((r) => r.id);
    setRunning(false);
    setConfirming(null);
    const t = ACTION_TEXT[action];
    if (failed.length === 0) toast.success(`${t.done} ${plural(ids.length, "sandbox", "sandboxes")}`);
    else {
      toast.error(`${t.verb} failed for ${failed.length} of ${ids.length}`, {
        description: results.find((r) => !r.ok)?.detail,
      });
      setResults({ action, results });
    }
    onSettled(failed);
    void queryClient.invalidateQueries({ queryKey: sandboxKeys.lists() });
  };

  const pending = confirming?.rows ?? [];
  const skipped = confirming?.skipped ?? 0;
  const action = confirming?.action ?? null;

  return (
    <>
      {selected.length > 0 ? (
        <div
          role="region"
          aria-label="Bulk actions"
          className="flex flex-wrap items-center gap-2 rounded-lg border bg-muted/40 px-3 py-2 text-sm"
        >
          <span className="font-medium">{plural(selected.length, "sandbox", "sandboxes")} selected</span>
          <div className="ml-auto flex flex-wrap gap-2">
            {(["pause", "resume", "terminate"] as const).map((kind) => {
              const n = targets(kind).length;
              return (
                <Button
                  key={kind}
                  size="sm"
                  variant={kind === "terminate" ? "destructive" : "outline"}
                  disabled={n === 0 || running}
                  onClick={() => open(kind)}
                >
                  {ACTION_TEXT[kind].verb} {n > 0 ? `(${n})` : ""}
                </Button>
              );
            })}
            <Button size="sm" variant="ghost" onClick={onClear} disabled={running}>
              Clear selection
            </Button>
          </div>
        </div>
      ) : null}

      <Dialog
        open={confirming !== null}
        onOpenChange={(open) => {
          if (!open && !running) setConfirming(null);
        }}
        title={action ? `${ACTION_TEXT[action].verb} ${plural(pending.length, "sandbox", "sandboxes")}?` : ""}
        description={
          action === "terminate"
            ? "Terminating stops every process and deletes the sandbox's disk. This cannot be undone."
            : action === "pause"
              ? "Paused sandboxes keep their memory and disk and stop using CPU; resume them at any time."
              : "Resumed sandboxes continue where they were paused, and their timeout restarts."
        }
      >
        <ul className="max-h-48 overflow-auto rounded-md border bg-muted/30 p-2 font-mono text-xs">
          {pending.slice(0, SHOWN_IDS).map((s) => (
            <li key={s.id}>{s.id}</li>
          ))}
          {pending.length > SHOWN_IDS ? (
            <li className="font-sans text-muted-foreground">and {pending.length - SHOWN_IDS} more</li>
          ) : null}
        </ul>
        {skipped > 0 && action ? (
          <p className="text-sm text-muted-foreground">
            {plural(skipped, "selected sandbox is", "selected sandboxes are")} not {ACTION_TEXT[action].target} and will
            be left as they are.
          </p>
        ) : null}
        <DialogActions cancelDisabled={running}>
          <Button
            variant={action === "terminate" ? "destructive" : "default"}
            disabled={running}
            onClick={() => confirming && void run(confirming.action, confirming.rows)}
          >
            {running
              ? "Working…"
              : action
                ? `${ACTION_TEXT[action].verb} ${plural(pending.length, "sandbox", "sandboxes")}`
                : ""}
          </Button>
        </DialogActions>
      </Dialog>

      <Dialog
        open={results !== null}
        onOpenChange={(open) => {
          if (!open) setResults(null);
        }}
        title={
          results
            ? `${ACTION_TEXT[results.action].verb}: ${results.results.filter((r) => r.ok).length} done, ${results.results.filter((r) => !r.ok).length} failed`
            : ""
        }
        description="The failed sandboxes are still selected, so you can try again."
      >
        <ul className="max-h-72 divide-y overflow-auto rounded-md border text-sm" aria-label="Results per sandbox">
          {results?.results.map((r) => (
            <li key={r.id} className="flex flex-col gap-0.5 px-3 py-2">
              <span className="flex items-center justify-between gap-2">
                <span className="font-mono text-xs">{r.id}</span>
                <Badge variant={r.ok ? "success" : "destructive"}>{r.ok ? "done" : "failed"}</Badge>
              </span>
              {r.detail ? <span className="text-xs text-muted-foreground">{r.detail}</span> : null}
            </li>
          ))}
        </ul>
        <div className="flex justify-end">
          <DialogClose className="inline-flex h-9 items-center rounded-md bg-primary px-4 text-sm font-medium text-primary-foreground hover:bg-primary/90">
            Close
          </DialogClose>
        </div>
      </Dialog>
    </>
  );
}
