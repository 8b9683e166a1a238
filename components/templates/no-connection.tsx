import Link from "next/link";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { Button } from "../ui/button";

/** The templates pages without an orkestr connection: nothing to list or build, and where to add one. */
export function TemplatesNoConnection() {
  return (
    <Alert variant="warning">
      <AlertTitle>No orkestr connection yet</AlertTitle>
      <AlertDescription className="flex flex-col items-start gap-3 text-foreground">
        <p>
          Templates are built and listed through an orkestr connection: the hosted API with your token, any v1 server,
          or the local engine that ships with Baton.
        </p>
        <Button size="sm" asChild>
          <Link href="/settings/connections">Set up a connection</Link>
        </Button>
      </AlertDescription>
    </Alert>
  );
}
