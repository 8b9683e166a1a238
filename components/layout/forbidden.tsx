import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { PageHeader } from "./page-header";

/**
 * A console page the user's role may not see: what the page's API would answer with 403, said in
 * the page instead of its data (pages check the same permission as their API routes).
 */
export function Forbidden({ title, detail }: { title: string; detail: string }) {
  return (
    <>
      <PageHeader title={title} />
      <Alert variant="warning" data-testid="forbidden">
        <AlertTitle>You do not have access to this page</AlertTitle>
        <AlertDescription className="text-foreground">
          <p>{detail}</p>
          <p>A team owner or admin can give you a role that allows it (or add you to their team).</p>
        </AlertDescription>
      </Alert>
    </>
  );
}
