import type { Metadata } from "next";
import { PageHeader } from "../../../../components/layout/page-header";
import { TemplatesNoConnection } from "../../../../components/templates/no-connection";
import { TemplateForm } from "../../../../components/templates/create/template-form";
import { Alert, AlertDescription, AlertTitle } from "../../../../components/ui/alert";
import { requirePermission } from "../../../../lib/server/auth";

export const metadata: Metadata = { title: "Create a template" };

type SearchParams = Promise<Record<string, string | string[] | undefined>>;

// /templates/new (?from=<id>: "Edit", prefilled from that template). The server part checks the role
// and reads the connection's base URL (not its token) for "Show code"; the form is a client leaf.
export default async function NewTemplatePage({ searchParams }: { searchParams: SearchParams }) {
  const raw = (await searchParams).from;
  const from = typeof raw === "string" && raw ? raw : null;
  const header = (
    <PageHeader
      title={from ? "Create a template from another" : "Create a template"}
      description="A base image plus shell steps, built once into an image that sandboxes start from."
    />
  );
  // The permission POST /api/v1/templates requires; checked before anything is read.
  const access = await requirePermission("templates.write");
  if (!access.ok) {
    return (
      <>
        {header}
        <Alert variant="warning">
          <AlertTitle>You cannot create templates</AlertTitle>
          <AlertDescription className="text-foreground">
            {access.detail} Ask a team admin for the member role.
          </AlertDescription>
        </Alert>
      </>
    );
  }
  const connection = access.team.connection;
  return (
    <div className="mx-auto w-full max-w-3xl">
      {header}
      {connection ? <TemplateForm baseUrl={connection.baseUrl} from={from} /> : <TemplatesNoConnection />}
    </div>
  );
}
