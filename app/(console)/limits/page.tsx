import type { Metadata } from "next";
import { NoConnection } from "../../../components/layout/no-connection";
import { Forbidden } from "../../../components/layout/forbidden";
import { PageHeader } from "../../../components/layout/page-header";
import { LimitsView } from "../../../components/limits/limits-view";
import { navItem } from "../../../lib/config/page-intro";
import { requirePermission } from "../../../lib/server/auth";

export const metadata: Metadata = { title: "Limits" };

/**
 * The plan's limits and what this account uses of them, live (client-side through /api/v1). The
 * server part checks the role and reads the active connection's base URL (not its token) for the
 * code snippet, and the name of the team it was made for: the engine names its account by Baton's
 * internal team id, which means nothing to a reader. Without a connection there is nothing to
 * read, and the page says where to add one.
 */
export default async function LimitsPage() {
  const item = navItem("/limits");
  // The permission GET /api/v1/sandboxes/limits requires.
  const access = await requirePermission("sandboxes.read");
  if (!access.ok) return <Forbidden title={item.title} detail={access.detail} />;
  const connection = access.team.connection;
  return (
    <>
      <PageHeader title={item.title} description={item.description} />
      {connection ? (
        <LimitsView baseUrl={connection.baseUrl} teamName={access.team.team.name} />
      ) : (
        <NoConnection>
          Your plan&apos;s limits are read through an orkestr connection: the hosted API with your token, any v1 server,
          or the local engine that ships with Baton.
        </NoConnection>
      )}
    </>
  );
}
