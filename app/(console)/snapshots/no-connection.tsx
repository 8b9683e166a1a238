import Link from "next/link";
import { Alert, AlertDescription, AlertTitle } from "../../../components/ui/alert";
import { Button } from "../../../components/ui/button";

/** Without a connection there are no snapshots to read: says so and where to add one. */
export function NoConnection() {
  return (
    <Alert variant="warning">
      <AlertTitle>No orkestr connection yet</AlertTitle>
      <AlertDescription className="flex flex-col items-start gap-3 text-foreground">
        <p>
          Your snapshots are read through an orkestr connection: the hosted API with your token, any v1 server, or the
          local engine that ships with Baton.
        </p>
        <Button size="sm" asChild>
          <Link href="/settings/connections">Set up a connection</Link>
        </Button>
      </AlertDescription>
    </Alert>
  );
}
