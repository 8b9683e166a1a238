"use client";

import dynamic from "next/dynamic";
import { useState } from "react";
import type { Sandbox } from "../../../lib/orkestr/schemas/sandboxes";
import { Button } from "../../ui/button";
import { Dialog, DialogActions } from "../../ui/dialog";
import { useLifecycleAction, useSandboxEdits } from "../../../lib/queries/sandbox-lifecycle";
import { isFinished } from "../../../lib/sandbox-status";

// Keep alive's dialog loads on first use (pointing at or focusing its button starts the download); once
// opened it stays mounted, so closing it runs the dialog's own close (focus back to the button).
const loadKeepAlive = () => import("./keep-alive-dialog").then((m) => m.KeepAliveDialog);
const KeepAliveDialog = dynamic(loadKeepAlive, { ssr: false });
// "Snapshot…" likewise: its dialog (name, progress, the cap) is not part of the page's first load.
const loadTakeSnapshot = () => import("../../snapshots/take-snapshot-dialog").then((m) => m.TakeSnapshotDialog);
const TakeSnapshotDialog = dynamic(loadTakeSnapshot, { ssr: false });

/** Pause, resume, keep-alive and terminate (with confirmation), as the status allows. */
export function LifecycleActions({
  sandbox,
  maxTimeoutSeconds,
  canSnapshot,
}: {
  sandbox: Sandbox;
  maxTimeoutSeconds: number;
  /** The role may take snapshots (snapshots.write): Snapshot… is offered. */
  canSnapshot: boolean;
}) {
  const lifecycle = useLifecycleAction();
  const edits = useSandboxEdits(sandbox.id);
  const pending = lifecycle.isPending ? lifecycle.variables.action : null;
  const act = (action: "pause" | "resume" | "terminate") => lifecycle.mutate({ action, id: sandbox.id });
  const [confirmTerminate, setConfirmTerminate] = useState(false);
  const [keepAlive, setKeepAlive] = useState(false);
  const [keepAliveWanted, setKeepAliveWanted] = useState(false);
  const [snapshotOpen, setSnapshotOpen] = useState(false);
  const [snapshotWanted, setSnapshotWanted] = useState(false);
  const status = sandbox.status;
  const busy = pending !== null;
  if (isFinished(status)) return null;
  return (
    <div className="flex flex-wrap items-center gap-2">
      {status === "running" ? (
        <>
          <Button variant="outline" size="sm" disabled={busy} onClick={() => act("pause")}>
            {pending === "pause" ? "Pausing…" : "Pause"}
          </Button>
          <Button
            variant="outline"
            size="sm"
            disabled={busy || edits.setTimeout.isPending}
            onPointerEnter={() => void loadKeepAlive()}
            onFocus={() => void loadKeepAlive()}
            onClick={() => {
              setKeepAliveWanted(true);
              setKeepAlive(true);
            }}
          >
            Keep alive…
          </Button>
          {canSnapshot ? (
            <Button
              variant="outline"
              size="sm"
              disabled={busy}
              onPointerEnter={() => void loadTakeSnapshot()}
              onFocus={() => void loadTakeSnapshot()}
              onClick={() => {
                setSnapshotWanted(true);
                setSnapshotOpen(true);
              }}
            >
              Snapshot…
            </Button>
          ) : null}
        </>
      ) : null}
      {status === "paused" ? (
        <Button variant="outline" size="sm" disabled={busy} onClick={() => act("resume")}>
          {pending === "resume" ? "Resuming…" : "Resume"}
        </Button>
      ) : null}
      <Button variant="destructive" size="sm" disabled={busy} onClick={() => setConfirmTerminate(true)}>
        Terminate…
      </Button>

      <Dialog
        open={confirmTerminate}
        onOpenChange={setConfirmTerminate}
        title={`Terminate ${sandbox.id}?`}
        description="Its processes, memory and /workspace are gone for good; a volume at /persist is kept. The sandbox stays in your history."
      >
        <DialogActions>
          <Button
            variant="destructive"
            onClick={() => {
              setConfirmTerminate(false);
              act("terminate");
            }}
          >
            Terminate sandbox
          </Button>
        </DialogActions>
      </Dialog>
      {keepAliveWanted ? (
        <KeepAliveDialog
          open={keepAlive}
          onOpenChange={setKeepAlive}
          current={sandbox.timeout_seconds ?? null}
          maxSeconds={maxTimeoutSeconds}
          pending={edits.setTimeout.isPending}
          onSubmit={(seconds) =>
            edits.setTimeout.mutate(seconds, {
              onSuccess: () => setKeepAlive(false),
            })
          }
        />
      ) : null}
      {snapshotWanted ? (
        <TakeSnapshotDialog sandbox={sandbox} open={snapshotOpen} onOpenChange={setSnapshotOpen} />
      ) : null}
    </div>
  );
}
