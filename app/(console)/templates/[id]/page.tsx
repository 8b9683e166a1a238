import type { Metadata } from "next";
import { Forbidden } from "../../../../components/layout/forbidden";
import { PageHeader } from "../../../../components/layout/page-header";
import { TemplatesNoConnection } from "../../../../components/templates/no-connection";
import { TemplateDetail } from "../../../../components/templates/template-detail";
import { requirePermission } from "../../../../lib/server/auth";

type Params = Promise<{ id: string }>;

/** The id as typed in the URL; a malformed escape is kept as is (the upstream then says 404). */
function decodeId(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  const { id } = await params;
  return { title: `Template ${decodeId(id)}` };
}

// A template's page. The server part checks the role and reads the connection's base URL (for the
// snippets, never its token); the template and its log are read live by the client leaf.
export default async function TemplatePage({ params }: { params: Params }) {
  const id = decodeId((await params).id);
  // The permission GET /api/v1/templates/{id} requires.
  const access = await requirePermission("templates.read");
  if (!access.ok) return <Forbidden title={id} detail={access.detail} />;
  const connection = access.team.connection;
  if (!connection) {
    return (
      <>
        <PageHeader title={id} />
        <TemplatesNoConnection />
      </>
    );
  }
  return <TemplateDetail id={id} baseUrl={connection.baseUrl} />;
}
