import type { Metadata } from "next";
import { Forbidden } from "../../../../components/layout/forbidden";
import { SnapshotDetail } from "../../../../components/snapshots/snapshot-detail";
import { requirePermission } from "../../../../lib/server/auth";
import { can } from "../../../../lib/server/rbac";
import { NoConnection } from "../no-connection";

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
  return { title: `Snapshot ${decodeId(id)}` };
}

/** One snapshot: its facts, its fork tree with live statuses, the fork form and Delete (all client-side). */
export default async function SnapshotPage({ params }: { params: Params }) {
  const id = decodeId((await params).id);
  const access = await requirePermission("snapshots.read");
  if (!access.ok) return <Forbidden title={id} detail={access.detail} />;
  const connection = access.team.connection;
  if (!connection)
    return (
      <>
        <h1 className="pb-6 text-2xl font-semibold tracking-tight">{id}</h1>
        <NoConnection />
      </>
    );
  // A fork is a sandbox create (sandboxes.write); deleting needs snapshots.write. The API checks both too.
  return (
    <SnapshotDetail
      id={id}
      canFork={can(access.team.role, "sandboxes.write")}
      canDelete={can(access.team.role, "snapshots.write")}
    />
  );
}
