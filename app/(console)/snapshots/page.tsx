import type { Metadata } from "next";
import { Forbidden } from "../../../components/layout/forbidden";
import { PageHeader } from "../../../components/layout/page-header";
import { SnapshotList } from "../../../components/snapshots/snapshot-list";
import { navItem } from "../../../lib/config/page-intro";
import { requirePermission } from "../../../lib/server/auth";
import { can } from "../../../lib/server/rbac";
import { NoConnection } from "./no-connection";

export const metadata: Metadata = { title: "Snapshots" };

/** The named snapshots of the connection's account; the list itself is live, client-side through /api/v1. */
export default async function SnapshotsPage() {
  const item = navItem("/snapshots");
  // The permission GET /api/v1/snapshots requires.
  const access = await requirePermission("snapshots.read");
  if (!access.ok) return <Forbidden title={item.title} detail={access.detail} />;
  const connection = access.team.connection;
  return (
    <>
      <PageHeader title={item.title} description={item.description} />
      {connection ? (
        <SnapshotList
          canFork={can(access.team.role, "sandboxes.write")}
          canDelete={can(access.team.role, "snapshots.write")}
        />
      ) : (
        <NoConnection />
      )}
    </>
  );
}
