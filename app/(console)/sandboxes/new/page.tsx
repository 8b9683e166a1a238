import type { Metadata } from "next";
import Link from "next/link";
import { PageHeader } from "../../../../components/layout/page-header";
import { CreateSandboxForm } from "../../../../components/sandboxes/create/create-sandbox-form";
import { Alert, AlertDescription, AlertTitle } from "../../../../components/ui/alert";
import { activeMembership, requireUser } from "../../../../lib/server/auth";
import { can } from "../../../../lib/server/rbac";
import { activeConnection } from "../../../../lib/server/tokens";

export const metadata: Metadata = { title: "Create a sandbox" };

// /sandboxes/new: the create form. The server part checks the role and reads the active
// connection's base URL (not its token) for "Show code"; the form itself is a client leaf that
// loads the plan's limits and option lists through /api/v1.
export default async function NewSandboxPage() {
  const current = await requireUser();
  const role = activeMembership(current)?.role;
  const connection = await activeConnection(current.user.id);
  const header = <PageHeader title="Create a sandbox" description="Every option of the SDK's Sandbox.create, checked against your plan before it is sent." />;
  if (!can(role, "sandboxes.write")) {
    return (
      <>
        {header}
        <Alert variant="warning">
          <AlertTitle>You cannot create sandboxes</AlertTitle>
          <AlertDescription className="text-foreground">Your role in this team reads sandboxes but does not create them. Ask a team admin for the member role.</AlertDescription>
        </Alert>
      </>
    );
  }
  if (!connection) {
    return (
      <>
        {header}
        <Alert variant="warning">
          <AlertTitle>No orkestr connection yet</AlertTitle>
          <AlertDescription className="text-foreground">
            Sandboxes are created through your orkestr connection.{" "}
            <Link href="/settings/connections" className="font-medium underline underline-offset-4">
              Add one, or use the local engine
            </Link>
            .
          </AlertDescription>
        </Alert>
      </>
    );
  }
  return (
    <div className="mx-auto w-full max-w-3xl">
      {header}
      <CreateSandboxForm baseUrl={connection.baseUrl} />
    </div>
  );
}
