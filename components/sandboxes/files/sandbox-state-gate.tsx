"use client";

import { useQuery } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { errorText } from "../../../lib/orkestr/errors";
import type { Sandbox } from "../../../lib/orkestr/schemas/sandboxes";
import { useLifecycleAction } from "../../../lib/queries/sandbox-lifecycle";
import { sandboxQueries } from "../../../lib/queries/sandboxes";
import { EmptyState } from "../../layout/empty-state";
import { Alert, AlertDescription, AlertTitle } from "../../ui/alert";
import { Button } from "../../ui/button";
import { Skeleton } from "../../ui/skeleton";
import { isFinished, isTransitional } from "../../../lib/sandbox-status";
import { ReadOnlyNote } from "../../ui/read-only-note";
import { useSandboxAccess } from "../detail/use-sandbox-access";

/**
 * What the Files and Previews tabs need before they can do anything: a sandbox that runs. A paused
 * one is not read (reading files or a preview of an auto_resume sandbox would wake it, and an open
 * tab alone must keep no sandbox awake): it says so and offers Resume. A gone one says its files
 * and ports went with it.
 */
export function SandboxStateGate({
  sandboxId,
  what,
  children,
}: {
  sandboxId: string;
  what: "files" | "previews";
  children: (sandbox: Sandbox) => ReactNode;
}) {
  const sandbox = useQuery({
    ...sandboxQueries.detail(sandboxId),
    refetchInterval: (q) => (q.state.data && isTransitional(q.state.data.status) ? 2_000 : false),
  });
  const resume = useLifecycleAction();
  const { canChange, whyNot } = useSandboxAccess();

  if (sandbox.isPending) {
    return (
      <div className="flex flex-col gap-3" aria-busy="true" aria-label={`Loading sandbox ${sandboxId}`}>
        <Skeleton className="h-9 w-2/3" />
        <Skeleton className="h-64 w-full" />
      </div>
    );
  }
  if (sandbox.isError) {
    return (
      <Alert variant="destructive">
        <AlertTitle>Could not load sandbox {sandboxId}</AlertTitle>
        <AlertDescription className="flex flex-col items-start gap-2">
          <p>{errorText(sandbox.error)}</p>
          <Button size="sm" variant="outline" onClick={() => void sandbox.refetch()}>
            Try again
          </Button>
        </AlertDescription>
      </Alert>
    );
  }
  const s = sandbox.data;
  if (isFinished(s.status)) {
    return (
      <EmptyState
        title={`This sandbox is ${s.status}`}
        description={
          what === "files"
            ? "Its /workspace went with it: scratch files do not outlive a sandbox. Files on an attached volume are kept in the volume."
            : "Its processes and ports went with it, so there is nothing to preview."
        }
      />
    );
  }
  if (s.status === "paused" || s.status === "pausing") {
    return (
      <EmptyState
        title="This sandbox is paused"
        description={
          what === "files"
            ? "Its files cannot be read while it is paused. Resume it to browse, edit and upload."
            : "Its servers are frozen, so previews answer 409 sandbox_paused until it runs again. Resume it to preview."
        }
        action={
          canChange ? (
            <Button onClick={() => resume.mutate({ action: "resume", id: sandboxId })} disabled={resume.isPending}>
              {resume.isPending ? "Resuming…" : "Resume sandbox"}
            </Button>
          ) : (
            <ReadOnlyNote>{whyNot("resume sandboxes")}</ReadOnlyNote>
          )
        }
      />
    );
  }
  if (s.status !== "running") {
    return (
      <div
        role="status"
        className="rounded-lg border border-dashed px-6 py-12 text-center text-sm text-muted-foreground"
      >
        The sandbox is {s.status}; this tab opens once it runs.
      </div>
    );
  }
  return <>{children(s)}</>;
}
