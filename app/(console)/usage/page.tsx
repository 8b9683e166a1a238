import type { Metadata } from "next";
import { Forbidden } from "../../../components/layout/forbidden";
import { NoConnection } from "../../../components/layout/no-connection";
import { PageHeader } from "../../../components/layout/page-header";
import { SpendCaps } from "../../../components/usage/spend-caps";
import { UsageView } from "../../../components/usage/usage-view";
import { navItem } from "../../../lib/config/page-intro";
import { requirePermission } from "../../../lib/server/auth";

export const metadata: Metadata = { title: "Usage" };

/**
 * Usage and cost (issue 22; usage.read, what GET /api/usage requires): a UTC date range kept in the
 * URL, the month so far with the run-rate and its straight-line forecast, cost per day stacked by
 * member or template (chart and table), top sandboxes, per member, storage, the rate card (an
 * estimate; owners change it), and a CSV of each table as shown. Members and viewers see their own
 * usage beside the team's total; admins and owners see everyone's. Baton reads the counters through
 * the team's orkestr connection: without one there is nothing to read, and the page says where to
 * add one (as the other pages fed by a connection do). Below the usage: the spend caps (how close each is,
 * setting them, where alerts go), applied by the same job through the same connection.
 */
export default async function UsagePage() {
  const item = navItem("/usage");
  const access = await requirePermission("usage.read");
  if (!access.ok) return <Forbidden title={item.title} detail={access.detail} />;
  return (
    <>
      <PageHeader title={item.title} description={item.description} />
      {access.team.connection ? (
        <div className="flex flex-col gap-6">
          <UsageView />
          <SpendCaps />
        </div>
      ) : (
        <NoConnection>
          Usage and cost are read from orkestr through a connection: the hosted API with your token, any v1 server, or
          the local engine that ships with Baton.
        </NoConnection>
      )}
    </>
  );
}
