import type { Metadata } from "next";
import { NoConnection } from "../../../components/layout/no-connection";
import { EventFeed } from "../../../components/events/event-feed";
import { Forbidden } from "../../../components/layout/forbidden";
import { PageHeader } from "../../../components/layout/page-header";
import { ReceiveInBaton } from "../../../components/webhooks/receive-in-baton";
import { navItem } from "../../../lib/config/page-intro";
import { requirePermission } from "../../../lib/server/auth";

export const metadata: Metadata = { title: "Events" };

/**
 * The webhook deliveries Baton's own receiver verified and recorded, live. Events belong to the
 * receiver on the user's active connection; without a connection there is nothing to receive from.
 */
export default async function EventsPage({ searchParams }: { searchParams: Promise<{ type?: string | string[] }> }) {
  const item = navItem("/events");
  // The permission GET /api/hooks/events requires.
  const access = await requirePermission("webhooks.read");
  if (!access.ok) return <Forbidden title={item.title} detail={access.detail} />;
  const connection = access.team.connection;
  const raw = (await searchParams).type;
  const type = typeof raw === "string" && /^[a-z0-9_.]{1,100}$/.test(raw) ? raw : "";
  return (
    <>
      <PageHeader
        title={item.title}
        description={item.description}
        actions={connection ? <ReceiveInBaton hideWhenReceiving /> : null}
      />
      {connection ? (
        <EventFeed baseUrl={connection.baseUrl} initialType={type} />
      ) : (
        <NoConnection>
          Baton receives the webhook events of an orkestr connection: the hosted API with your token, any v1 server, or
          the local engine that ships with Baton.
        </NoConnection>
      )}
    </>
  );
}
