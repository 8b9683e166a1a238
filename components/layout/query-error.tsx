import { errorText, OrkestrError } from "../../lib/orkestr/errors";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { Button } from "../ui/button";
import { TeamLink as Link } from "./team-link";

/**
 * A read that failed for good (a 4xx, an unreadable answer; transient failures get a RetryNotice
 * instead): what the server said, "Try again", and where to fix a missing or refused connection.
 */
export function QueryError({
  title,
  error,
  fallback,
  onRetry,
}: {
  title: string;
  error: unknown;
  /** Said when the error has no sentence of its own. */
  fallback: string;
  onRetry: () => void;
}) {
  const noConnection =
    error instanceof OrkestrError && (error.code === "no_connection" || error.code.startsWith("connection_"));
  return (
    <Alert variant="destructive">
      <AlertTitle>{title}</AlertTitle>
      <AlertDescription className="flex flex-col gap-3">
        <p>{errorText(error, fallback)}</p>
        <div className="flex gap-2">
          <Button size="sm" variant="outline" onClick={onRetry}>
            Try again
          </Button>
          {noConnection ? (
            <Button size="sm" asChild>
              <Link href="/settings/connections">Set up a connection</Link>
            </Button>
          ) : null}
        </div>
      </AlertDescription>
    </Alert>
  );
}
