import type { Metadata } from "next";
import { Forbidden } from "../../../../components/layout/forbidden";
import { PageHeader } from "../../../../components/layout/page-header";
import { WebhookDetail } from "../../../../components/webhooks/webhook-detail";
import { can } from "../../../../lib/server/rbac";
import { requirePermission } from "../../../../lib/server/auth";
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
  return { title: `Webhook ${decodeId(id)}` };
}

/**
 * One webhook. The server checks the role and reads the connection's base URL (for the snippets);
 * the webhook and its deliveries are read in the browser through /api/v1, live while visible.
 */
export default async function WebhookPage({ params }: { params: Params }) {
  const id = decodeId((await params).id);
  // The permission GET /api/v1/webhooks/{id} requires: without it, nothing is read.
  const access = await requirePermission("webhooks.read");
  if (!access.ok) return <Forbidden title={id} detail={access.detail} />;
  const connection = access.team.connection;
  if (!connection)
    return (
      <>
        <PageHeader title={<span className="font-mono">{id}</span>} />
        <NoConnection />
      </>
    );
  return <WebhookDetail id={id} baseUrl={connection.baseUrl} canWrite={can(access.team.role, "webhooks.write")} />;
}
