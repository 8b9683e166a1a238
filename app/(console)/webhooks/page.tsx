import type { Metadata } from "next";
import { Forbidden } from "../../../components/layout/forbidden";
import { PageHeader } from "../../../components/layout/page-header";
import { CreateWebhookButton } from "../../../components/webhooks/create-webhook";
import { ReceiveInBaton } from "../../../components/webhooks/receive-in-baton";
import { WebhookList } from "../../../components/webhooks/webhook-list";
import { navItem } from "../../../lib/config/page-intro";
import { reasonFor } from "../../../lib/server/client-permissions";
import { ReadOnlyNote } from "../../../components/ui/read-only-note";
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
  // Creating one (or Baton's own receiver) needs webhooks.write: a role without it is told why.
  const readOnly = reasonFor(access.team, "webhooks.write", "create webhooks");
  return (
    <>
      <PageHeader
        title={item.title}
        description={item.description}
        actions={
          !connection ? null : readOnly ? (
            <ReadOnlyNote className="max-w-xs">{readOnly}</ReadOnlyNote>
          ) : (
            <>
              <ReceiveInBaton variant="outline" />
              <CreateWebhookButton baseUrl={connection.baseUrl} />
            </>
          )
        }
      />
      {connection ? <WebhookList baseUrl={connection.baseUrl} /> : <NoConnection />}
    </>
  );
}
