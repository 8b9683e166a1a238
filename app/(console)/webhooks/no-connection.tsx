import Link from "next/link";
import { Alert, AlertDescription, AlertTitle } from "../../../components/ui/alert";
import { Button } from "../../../components/ui/button";

/** Without an orkestr connection there are no webhooks to list: say so, and where to add one. */
export function NoConnection() {
  return (
    <Alert variant="warning">
      <AlertTitle>No orkestr connection yet</AlertTitle>
      <AlertDescription className="flex flex-col items-start gap-3 text-foreground">
        <p>
          Webhooks belong to an orkestr account and are managed through a connection: the hosted API with your token,
          any v1 server, or the local engine that ships with Baton.
        </p>
        <Button size="sm" asChild>
          <Link href="/settings/connections">Set up a connection</Link>
        </Button>
      </AlertDescription>
    </Alert>
  );
}
