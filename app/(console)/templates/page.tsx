import type { Metadata } from "next";
import { PageHeader } from "../../../components/layout/page-header";
import { Forbidden } from "../../../components/layout/forbidden";
import { TemplatesNoConnection } from "../../../components/templates/no-connection";
import { TemplatesList } from "../../../components/templates/templates-list";
import { Button } from "../../../components/ui/button";
import { navItem } from "../../../lib/config/page-intro";
import { newTemplateHref } from "../../../lib/resource-links";
import { requirePermission } from "../../../lib/server/auth";
import { ReadOnlyNote } from "../../../components/ui/read-only-note";
import { reasonFor } from "../../../lib/server/client-permissions";
import { TeamLink as Link } from "../../../components/layout/team-link";

export const metadata: Metadata = { title: "Templates" };

/** Custom templates and the built-in base images; the data is live (client-side through /api/v1). */
export default async function TemplatesPage() {
  const item = navItem("/templates");
  // The permission GET /api/v1/templates requires.
  const access = await requirePermission("templates.read");
  if (!access.ok) return <Forbidden title={item.title} detail={access.detail} />;
  const connection = access.team.connection;
  // Create template needs templates.write: a role without it is told why instead.
  const readOnly = reasonFor(access.team, "templates.write", "create templates");
  return (
    <>
      <PageHeader
        title={item.title}
        description={item.description}
        actions={
          !connection ? null : readOnly ? (
            <ReadOnlyNote className="max-w-xs">{readOnly}</ReadOnlyNote>
          ) : (
            <Button asChild>
              <Link href={newTemplateHref()}>Create template</Link>
            </Button>
          )
        }
      />
      {connection ? <TemplatesList baseUrl={connection.baseUrl} /> : <TemplatesNoConnection />}
    </>
  );
}
