import type { Metadata } from "next";
import { Forbidden } from "../../../components/layout/forbidden";
import { PageHeader } from "../../../components/layout/page-header";
import { CreateWebhookButton } from "../../../components/webhooks/create-webhook";
import { ReceiveInBaton } from "../../../components/webhooks/receive-in-baton";
import { WebhookList } from "../../../components/webhooks/webhook-list";
import { navItem } from "../../../lib/config/page-intro";
import { can } from "../../../lib/server/rbac";
import { requirePermission } from "../../../lib/server/auth";
import { NoConnection } from "./no-connection";

export const metadata: Metadata = { title: "Webhooks" };

/**
 * The webhooks list. The server part checks the role and reads the active connection's base URL
 * (never its token) for the code snippets; the list is a client leaf, live through /api/v1.
 */
export default async function WebhooksPage() {
  const item = navItem("/webhooks");
  // The permission GET /api/v1/webhooks requires.
  const access = await requirePermission("webhooks.read");
  if (!access.ok) return <Forbidden title={item.title} detail={access.detail} />;
  const connection = access.team.connection;
  const canWrite = can(access.team.role, "webhooks.write");
  return (
    <>
      <PageHeader
        title={item.title}
        description={item.description}
        actions={
          connection && canWrite ? (
            <>
              <ReceiveInBaton variant="outline" />
              <CreateWebhookButton baseUrl={connection.baseUrl} />
            </>
          ) : null
        }
      />
      {connection ? <WebhookList baseUrl={connection.baseUrl} /> : <NoConnection />}
    </>
  );
}
