"use client";

import { Alert, AlertDescription, AlertTitle } from "../../components/ui/alert";
import { Button } from "../../components/ui/button";

/** A console page failed to render: say so, keep the shell, offer a retry. */
export default function ConsoleError({ error, retry }: { error: unknown; retry: () => void }) {
  // Server errors arrive without their message in production (only a digest), by design.
  const digest =
    typeof error === "object" && error !== null && "digest" in error && typeof error.digest === "string"
      ? error.digest
      : undefined;
  const detail =
    typeof error === "object" && error !== null && "detail" in error && typeof error.detail === "string"
      ? error.detail
      : "This page could not be loaded.";
  return (
    <Alert variant="destructive" className="flex flex-col gap-3">
      <AlertTitle>Something went wrong</AlertTitle>
      <AlertDescription className="text-foreground">
        {detail}
        {digest ? (
          <span className="block pt-1 text-muted-foreground">
            Reference: <code className="font-mono">{digest}</code>
          </span>
        ) : null}
      </AlertDescription>
      <div>
        <Button variant="outline" size="sm" onClick={() => retry()}>
          Try again
        </Button>
      </div>
    </Alert>
  );
}
