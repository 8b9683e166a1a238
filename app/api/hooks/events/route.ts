import { getMigratedDb } from "../../../../lib/server/db/index";
import { listEvents } from "../../../../lib/server/hooks/store";
import { EventsQuery } from "../../../../lib/server/hooks/schemas";
import { eventView } from "../../../../lib/server/hooks/view";
import { route } from "../../../../lib/server/route";

export const runtime = "nodejs";

// GET /api/hooks/events?type=&cursor=&limit= – the events the user's receiver on the acting team's
// connection recorded, newest first: `{items, next_cursor}`. Another user's events are never in it
// (lib/server/hooks/store.ts scopes the query by user and connection).
export const GET = route({ auth: "user", perm: "webhooks.read", query: EventsQuery }, async ({ user, team, query }) => {
  const db = await getMigratedDb();
  const connection = team?.connection;
  if (!connection) return { items: [], next_cursor: null };
  const page = await listEvents(db, { userId: user.id, connectionId: connection.id }, query);
  return { items: page.items.map(eventView), next_cursor: page.next };
});
