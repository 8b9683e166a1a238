"use client";

import { useState } from "react";
import type { Sandbox } from "../../../lib/orkestr/schemas/sandboxes";
import { Button } from "../../ui/button";
import { Dialog, DialogActions } from "../../ui/dialog";
import { KeepAliveDialog } from "./keep-alive-dialog";
import { useLifecycle } from "./use-lifecycle";
import { isFinished } from "../../../lib/sandbox-status";

/** Pause, resume, keep-alive and terminate (with confirmation), as the status allows. */
export function LifecycleActions({ sandbox, maxTimeoutSeconds }: { sandbox: Sandbox; maxTimeoutSeconds: number }) {
  const actions = useLifecycle(sandbox.id);
  const [confirmTerminate, setConfirmTerminate] = useState(false);
  const [keepAlive, setKeepAlive] = useState(false);
  const status = sandbox.status;
  const busy = actions.pause.isPending || actions.resume.isPending || actions.terminate.isPending;
  if (isFinished(status)) return null;
  return (
    <div className="flex flex-wrap items-center gap-2">
      {status === "running" ? (
        <>
          <Button variant="outline" size="sm" disabled={busy} onClick={() => actions.pause.mutate()}>
            {actions.pause.isPending ? "Pausing…" : "Pause"}
          </Button>
          <Button
            variant="outline"
            size="sm"
            disabled={busy || actions.setTimeout.isPending}
            onClick={() => setKeepAlive(true)}
          >
            Keep alive…
          </Button>
        </>
      ) : null}
      {status === "paused" ? (
        <Button variant="outline" size="sm" disabled={busy} onClick={() => actions.resume.mutate()}>
          {actions.resume.isPending ? "Resuming…" : "Resume"}
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
              actions.terminate.mutate();
            }}
          >
            Terminate sandbox
          </Button>
        </DialogActions>
      </Dialog>
      <KeepAliveDialog
        open={keepAlive}
        onOpenChange={setKeepAlive}
        current={sandbox.timeout_seconds ?? null}
        maxSeconds={maxTimeoutSeconds}
        pending={actions.setTimeout.isPending}
        onSubmit={(seconds) =>
          actions.setTimeout.mutate(seconds, {
            onSuccess: () => setKeepAlive(false),
          })
        }
      />
    </div>
  );
}
