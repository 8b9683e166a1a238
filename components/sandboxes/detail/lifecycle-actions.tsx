"use client";

import { useState } from "react";
import type { Sandbox } from "../../../lib/orkestr/schemas/sandboxes";
import { Button } from "../../ui/button";
import { Dialog, DialogActions } from "../../ui/dialog";
import { KeepAliveDialog } from "./keep-alive-dialog";
import { useLifecycleAction, useSandboxEdits } from "../../../lib/queries/sandbox-lifecycle";
import { isFinished } from "../../../lib/sandbox-status";

/** Pause, resume, keep-alive and terminate (with confirmation), as the status allows. */
export function LifecycleActions({ sandbox, maxTimeoutSeconds }: { sandbox: Sandbox; maxTimeoutSeconds: number }) {
  const lifecycle = useLifecycleAction();
  const edits = useSandboxEdits(sandbox.id);
  const pending = lifecycle.isPending ? lifecycle.variables.action : null;
  const act = (action: "pause" | "resume" | "terminate") => lifecycle.mutate({ action, id: sandbox.id });
  const [confirmTerminate, setConfirmTerminate] = useState(false);
  const [keepAlive, setKeepAlive] = useState(false);
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
            onClick={() => setKeepAlive(true)}
          >
            Keep alive…
          </Button>
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
    </div>
  );
}
