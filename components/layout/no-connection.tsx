import type { ReactNode } from "react";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { Button } from "../ui/button";
import { TeamLink as Link } from "./team-link";

/**
 * A page whose data comes through an orkestr connection, shown to a user who has none yet: what
 * the page would read through it (`children`, one sentence), and where to add one.
 */
export function NoConnection({ children }: { children: ReactNode }) {
  return (
    <Alert variant="warning">
      <AlertTitle>No orkestr connection yet</AlertTitle>
      <AlertDescription className="flex flex-col items-start gap-3 text-foreground">
        <p>{children}</p>
        <Button size="sm" asChild>
          <Link href="/settings/connections">Set up a connection</Link>
        </Button>
      </AlertDescription>
    </Alert>
  );
}
