"use client";

import { useQuery } from "@tanstack/react-query";
import { sandboxKeys, sandboxQueries } from "../../../lib/queries/sandboxes";
import { CopyButton } from "../../ui/copy-button";
import { maxTimeoutSeconds } from "../create/timeout-range";
import { ExpiryCountdown } from "./expiry-countdown";
import { StatusBadge } from "../status-badge";
import { LifecycleActions } from "./lifecycle-actions";
import { useSandbox } from "./sandbox-context";
import { errorText } from "../../../lib/orkestr/errors";
import { formatClock } from "../../../lib/format";
import { RetryNotice } from "../../layout/lazy-notices";
import { ReadOnlyNote } from "../../ui/read-only-note";
import { useSandboxAccess } from "./use-sandbox-access";
import { TeamLink as Link } from "../../layout/team-link";

/** The detail frame's header: the id (copyable), its status, a one-line summary and the lifecycle buttons. */
export function SandboxHeader() {
  const query = useSandbox();
  // The buttons a role may use (the API refuses the rest with 403 anyway).
  const { canChange, canSnapshot, whyNot } = useSandboxAccess();
  const { data: sandbox, isError, error } = query;
  const limits = useQuery(sandboxQueries.limits());
  const summary = [
    sandbox.template,
    sandbox.size,
    sandbox.region,
    sandbox.network ? `network ${sandbox.network}` : null,
  ]
    .filter(Boolean)
    .join(" · ");
  return (
    <div className="flex flex-col gap-3 pb-4">
      <nav aria-label="Breadcrumb" className="text-sm text-muted-foreground">
        <Link href="/sandboxes" className="hover:text-foreground hover:underline">
          Sandboxes
        </Link>
        <span aria-hidden="true"> / </span>
        <span className="font-mono">{sandbox.id}</span>
      </nav>
      <div className="flex flex-col gap-3 lg:flex-row lg:items-start lg:justify-between">
        <div className="flex min-w-0 flex-col gap-1.5">
          <div className="flex flex-wrap items-center gap-2">
            <h1 className="truncate font-mono text-xl font-semibold tracking-tight sm:text-2xl">{sandbox.id}</h1>
            <CopyButton text={sandbox.id} label="Copy id" copiedLabel="Copied" />
            <StatusBadge status={sandbox.status} data-testid="sandbox-status" />
          </div>
          <p className="text-sm text-muted-foreground">
            {summary}
            {sandbox.status === "running" ? (
              <>
                {summary ? " · " : ""}
                <ExpiryCountdown expiresAt={sandbox.expires_at} onTimeout={sandbox.on_timeout ?? "kill"} />
              </>
            ) : null}
          </p>
          {isError ? (
            <p role="status" className="text-xs text-destructive">
              Live status paused: {errorText(error)}
            </p>
          ) : null}
        </div>
        {canChange ? (
          <LifecycleActions
            sandbox={sandbox}
            maxTimeoutSeconds={maxTimeoutSeconds(limits.data)}
            canSnapshot={canSnapshot}
          />
        ) : (
          <ReadOnlyNote className="lg:max-w-sm">{whyNot("pause, resume or terminate sandboxes")}</ReadOnlyNote>
        )}
      </div>
      <RetryNotice query={query} queryKey={sandboxKeys.detail(sandbox.id)} title="Live status paused">
        <p className="text-muted-foreground">
          The status above is from the last successful refresh
          {query.dataUpdatedAt ? `, at ${formatClock(query.dataUpdatedAt)}` : ""}; it updates again when the orkestr API
          answers.
        </p>
      </RetryNotice>
    </div>
  );
}
