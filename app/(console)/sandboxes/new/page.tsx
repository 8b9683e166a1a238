import type { Metadata } from "next";
import { PageHeader } from "../../../../components/layout/page-header";
import { CreateSandboxForm } from "../../../../components/sandboxes/create/create-sandbox-form";
import { Alert, AlertDescription, AlertTitle } from "../../../../components/ui/alert";
import { requirePermission } from "../../../../lib/server/auth";
import { TeamLink as Link } from "../../../../components/layout/team-link";

export const metadata: Metadata = { title: "Create a sandbox" };

// /sandboxes/new: the create form. The server part checks the role and reads the active
// connection's base URL (not its token) for "Show code"; the form itself is a client leaf that
// loads the plan's limits and option lists through /api/v1.
export default async function NewSandboxPage({
  searchParams,
}: {
  searchParams?: Promise<Record<string, string | string[] | undefined>>;
} = {}) {
  // ?template=<id or name>: "Create sandbox from this" on a template's page preselects it.
  const template = (await searchParams)?.template;
  const header = (
    <PageHeader
      title="Create a sandbox"
      description="Every option of the SDK's Sandbox.create, checked against your plan before it is sent."
    />
  );
  // The permission POST /api/v1/sandboxes requires; checked before anything is read.
  const access = await requirePermission("sandboxes.write");
  if (!access.ok) {
    return (
      <>
        {header}
        <Alert variant="warning">
          <AlertTitle>You cannot create sandboxes</AlertTitle>
          <AlertDescription className="text-foreground">
            {access.detail} Ask a team admin for the member role.
          </AlertDescription>
        </Alert>
      </>
    );
  }
  const connection = access.team.connection;
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
      <CreateSandboxForm
        baseUrl={connection.baseUrl}
        initialTemplate={typeof template === "string" && template ? template : undefined}
      />
    </div>
  );
}
