"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRef, useState, type FormEvent } from "react";
import { formatMebibytes } from "../../lib/format";
import { snapshotHref } from "../../lib/resource-links";
import { asOrkestrError, errorText } from "../../lib/orkestr/errors";
import type { Sandbox } from "../../lib/orkestr/schemas/sandboxes";
import type { Snapshot } from "../../lib/orkestr/schemas/snapshots";
import { sandboxKeys, sandboxQueries } from "../../lib/queries/sandboxes";
import { snapshotKeys, snapshotMutations, snapshotQueries } from "../../lib/queries/snapshots";
import { newIdempotencyKey } from "../sandboxes/create/idempotency-key";
import { Button } from "../ui/button";
import { CodeTabs } from "../ui/code-tabs";
import { Dialog, DialogActions } from "../ui/dialog";
import { Input } from "../ui/input";
import { toast } from "../ui/toast";
import { CapNotice } from "./cap-notice";
import { createSnapshotCode } from "./snapshot-code";
import { snapshotCap } from "./snapshot-facts";
import { snapshotNameError, suggestSnapshotName } from "./snapshot-name";
import { useApiBaseUrl } from "./use-base-url";
import { TeamLink as Link } from "../layout/team-link";

function capFromError(body: unknown): number | null {
  const n = (body as { max_named_snapshots?: unknown } | null | undefined)?.max_named_snapshots;
  return typeof n === "number" ? n : null;
}

/**
 * "Snapshot…" on a sandbox's page: a name, then the capture (the sandbox is frozen for a moment and
 * keeps running), then the result with its page and a way to fork it. The plan's cap is shown before
 * anything is sent; a refusal at the cap names the snapshots to delete.
 */
export function TakeSnapshotDialog({
  sandbox,
  open,
  onOpenChange,
}: {
  sandbox: Pick<Sandbox, "id" | "template">;
  open: boolean;
  onOpenChange: (open: boolean) => void;
}) {
  const queryClient = useQueryClient();
  const baseUrl = useApiBaseUrl();
  const limits = useQuery(sandboxQueries.limits());
  const snapshots = useQuery({ ...snapshotQueries.list(), enabled: open });
  const [name, setName] = useState(() => suggestSnapshotName(sandbox.template, new Date()));
  const [touched, setTouched] = useState(false);
  const [created, setCreated] = useState<Snapshot | null>(null);
  /** One key per name: a retry of the same request after a lost answer returns the first snapshot. */
  const idempotency = useRef<{ key: string; name: string } | null>(null);
  const nameError = snapshotNameError(name.trim());
  const cap = snapshotCap(limits.data, snapshots.data);

  const mutation = useMutation({
    mutationFn: (n: string) => {
      if (idempotency.current?.name !== n) idempotency.current = { key: newIdempotencyKey(), name: n };
      return snapshotMutations.create(sandbox.id, n, idempotency.current.key);
    },
    onSuccess: (snap) => {
      idempotency.current = null;
      setCreated(snap);
      toast.success(`Snapshot ${snap.name ?? snap.id} taken`);
    },
    onError: (error) => {
      // A definite refusal frees the key: the next attempt is a new request.
      const { status } = asOrkestrError(error);
      if (status >= 400 && status < 500) idempotency.current = null;
    },
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: snapshotKeys.all });
      void queryClient.invalidateQueries({ queryKey: sandboxKeys.limits() });
      // The sandbox's timeline gains a snapshot.created event.
      void queryClient.invalidateQueries({ queryKey: sandboxKeys.detail(sandbox.id) });
    },
  });
  const serverError = mutation.isError ? asOrkestrError(mutation.error) : null;
  const capError = serverError?.code === "snapshot_cap_reached";
  const nameTaken = serverError?.code === "snapshot_name_taken";
  const fieldError = touched && nameError ? nameError : nameTaken ? serverError.detail : null;

  const close = (next: boolean) => {
    if (!next) {
      // The next opening starts over with a fresh name (unless a capture is still running).
      if (!mutation.isPending) {
        mutation.reset();
        setCreated(null);
        setTouched(false);
        setName(suggestSnapshotName(sandbox.template, new Date()));
      }
    }
    onOpenChange(next);
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (nameError || mutation.isPending) return;
    mutation.mutate(name.trim());
  };

  return (
    <Dialog
      open={open}
      onOpenChange={close}
      title={`Snapshot ${sandbox.id}`}
      description="Copies /workspace and /tmp under a name, freezing the sandbox for a moment; it keeps running. Any number of new sandboxes can then be forked from it."
      className="max-w-xl"
    >
      {created ? (
        <div className="flex flex-col gap-4" data-testid="snapshot-created">
          <p role="status" className="text-sm">
            Snapshot <strong>{created.name ?? created.id}</strong> is {created.status ?? "ready"}:{" "}
            {formatMebibytes(created.size_mb)}
            {typeof created.frozen_ms === "number" ? `, the sandbox was frozen for ${created.frozen_ms} ms` : ""}.
          </p>
          <div className="flex flex-wrap justify-end gap-2">
            <Button variant="outline" onClick={() => close(false)}>
              Close
            </Button>
            <Button variant="outline" asChild>
              <Link href={`${snapshotHref(created.id)}#fork`}>Fork it…</Link>
            </Button>
            <Button asChild>
              <Link href={snapshotHref(created.id)}>Open snapshot</Link>
            </Button>
          </div>
        </div>
      ) : (
        <form noValidate onSubmit={submit} className="flex flex-col gap-4">
          <div className="flex flex-col gap-1.5">
            <label htmlFor="snapshot-name" className="text-sm font-medium">
              Name
            </label>
            <Input
              id="snapshot-name"
              value={name}
              autoComplete="off"
              spellCheck={false}
              onChange={(e) => {
                setName(e.target.value);
                if (nameTaken) mutation.reset();
              }}
              onBlur={() => setTouched(true)}
              aria-invalid={fieldError ? true : undefined}
              aria-describedby={fieldError ? "snapshot-name-error" : "snapshot-name-hint"}
            />
            <p id="snapshot-name-hint" className="text-xs text-muted-foreground">
              Letters, digits, &apos;.&apos;, &apos;_&apos; and &apos;-&apos;; unique among your snapshots. Forks can
              name it instead of its id.
              {cap.cap !== null && cap.used !== null ? ` ${cap.used} of ${cap.cap} named snapshots in use.` : ""}
            </p>
            {fieldError ? (
              <p id="snapshot-name-error" className="text-xs font-medium text-destructive">
                {fieldError}
              </p>
            ) : null}
          </div>
          {capError || (cap.full && !mutation.isPending) ? (
            <CapNotice
              // The refusal names the cap too (max_named_snapshots), for a server whose limits do not.
              cap={cap.cap ?? capFromError(serverError?.body)}
              plan={limits.data?.plan}
              snapshots={snapshots.data ?? []}
              onDeleted={() => mutation.reset()}
            />
          ) : null}
          {serverError && !capError && !nameTaken ? (
            <p role="alert" className="text-sm font-medium text-destructive">
              The snapshot was not taken: {errorText(serverError)}
            </p>
          ) : null}
          {mutation.isPending ? (
            <p role="status" className="flex items-center gap-2 text-sm text-muted-foreground">
              <span
                aria-hidden="true"
                className="size-3 animate-spin rounded-full border-2 border-primary border-t-transparent motion-reduce:animate-none"
              />
              Freezing the sandbox, copying /workspace and /tmp, writing the copy…
            </p>
          ) : null}
          <details className="text-sm">
            <summary className="cursor-pointer text-muted-foreground hover:text-foreground">Show code</summary>
            <div className="pt-2">
              <CodeTabs
                snippets={createSnapshotCode(sandbox.id, name.trim() || "my-snapshot", baseUrl)}
                testId="snapshot-code"
              />
            </div>
          </details>
          <DialogActions cancelDisabled={mutation.isPending}>
            <Button type="submit" disabled={mutation.isPending}>
              {mutation.isPending ? "Taking the snapshot…" : "Take snapshot"}
            </Button>
          </DialogActions>
        </form>
      )}
    </Dialog>
  );
}
