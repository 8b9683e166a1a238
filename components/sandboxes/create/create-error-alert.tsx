"use client";

import type { OrkestrError } from "../../../lib/orkestr/errors";
import { Alert, AlertDescription, AlertTitle } from "../../ui/alert";
import { Button } from "../../ui/button";
import { explainCreateError, isAutoRetried } from "./explain-error";
import { TeamLink as Link } from "../../layout/team-link";

/**
 * A refused create in plain words, with the upstream's own detail under it. For a temporary failure
 * (fleet_full, an upstream restarting: isAutoRetried), a live countdown to the automatic retry (from
 * Retry-After), with "Retry now" and "Cancel".
 */
export function CreateErrorAlert({
  error,
  secondsLeft,
  autoRetrying,
  onRetryNow,
  onCancelRetry,
}: {
  error: OrkestrError;
  /** Seconds until the automatic retry, when one is scheduled. */
  secondsLeft: number | null;
  autoRetrying: boolean;
  onRetryNow: () => void;
  onCancelRetry: () => void;
}) {
  const explained = explainCreateError(error);
  const waiting = autoRetrying && secondsLeft !== null;
  const temporary = isAutoRetried(error);
  return (
    <Alert variant={temporary ? "warning" : "destructive"} data-testid="create-error">
      <AlertTitle>{explained.title}</AlertTitle>
      <AlertDescription className="flex flex-col gap-2 text-foreground">
        <p>{explained.advice}</p>
        <p className="text-muted-foreground">
          The server said: <span className="text-foreground">{error.detail}</span>{" "}
          <code className="rounded bg-muted px-1 py-0.5 font-mono text-xs">{error.code}</code>
        </p>
        {waiting ? (
          <p role="timer" aria-live="off" className="font-medium">
            {secondsLeft > 0 ? `Retrying in ${secondsLeft} s…` : "Retrying…"}
          </p>
        ) : null}
        {temporary && !autoRetrying ? (
          <p className="text-muted-foreground">Automatic retries stopped. Try again when you are ready.</p>
        ) : null}
        <div className="flex flex-wrap gap-2 pt-1">
          {temporary ? (
            <>
              <Button size="sm" onClick={onRetryNow}>
                Retry now
              </Button>
              {waiting ? (
                <Button size="sm" variant="outline" onClick={onCancelRetry}>
                  Cancel retry
                </Button>
              ) : null}
            </>
          ) : null}
          {explained.link ? (
            <Button asChild size="sm" variant="outline">
              <Link href={explained.link.href}>{explained.link.label}</Link>
            </Button>
          ) : null}
        </div>
      </AlertDescription>
    </Alert>
  );
}
