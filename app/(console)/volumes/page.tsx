import type { Metadata } from "next";
import { NoConnection } from "../../../components/layout/no-connection";
import { Suspense } from "react";
import { Forbidden } from "../../../components/layout/forbidden";
import { PageHeader } from "../../../components/layout/page-header";
import { Skeleton } from "../../../components/ui/skeleton";
import { VolumesView } from "../../../components/volumes/volumes-view";
import { navItem } from "../../../lib/config/page-intro";
import { requirePermission } from "../../../lib/server/auth";
import { can } from "../../../lib/server/rbac";

export const metadata: Metadata = { title: "Volumes" };

/**
 * Volumes: disks that outlive sandboxes, mounted at /persist. The list is live (client-side through
 * /api/v1); without a connection the page says where to add one instead of failing its queries.
 */
export default async function VolumesPage() {
  const item = navItem("/volumes");
  // The permission GET /api/v1/volumes requires; changing them needs volumes.write.
  const access = await requirePermission("volumes.read");
  if (!access.ok) return <Forbidden title={item.title} detail={access.detail} />;
  const connection = access.team.connection;
  return (
    <>
      <PageHeader
        title={item.title}
        description="Disks that outlive sandboxes: a sandbox created with one finds it at /persist."
      />
      {connection ? (
        // useSearchParams() (?volume= marks a row) reads the URL on the client; the fallback shows until it has.
        <Suspense fallback={<Skeleton className="h-64 w-full" />}>
          <VolumesView canWrite={can(access.team.role, "volumes.write")} baseUrl={connection.baseUrl} />
        </Suspense>
      ) : (
        <NoConnection>
          Volumes are kept by an orkestr API: the hosted one with your token, any v1 server, or the local engine that
          ships with Baton. Connect one to list and create them.
        </NoConnection>
      )}
    </>
  );
}
