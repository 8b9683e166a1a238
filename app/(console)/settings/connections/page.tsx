import type { Metadata } from "next";
import { PageHeader } from "../../../../components/layout/page-header";
import { ConnectionsManager } from "../../../../components/settings/connections/connections-manager";
import { SettingsNav } from "../../../../components/settings/settings-nav";
import { requireTeam, requireUser } from "../../../../lib/server/auth";
import { connectionList } from "../../../../lib/server/connections";
import { can } from "../../../../lib/server/rbac";

export const metadata: Metadata = { title: "Connections" };

// Settings → Connections: the orkestr APIs this user's console talks to. Read server-side (hints
// only, never a token) and handed to the client leaves as initial data.
export default async function ConnectionsPage() {
  const current = await requireUser();
  const membership = await requireTeam(current);
  const initial = await connectionList(current, membership);
  return (
    <>
      <PageHeader
        title="Connections"
        description="The orkestr APIs this console talks to for you. Each team has its own connections. Tokens stay on the server, encrypted; one connection per team is active."
      />
      <SettingsNav current="connections" isAdmin={can(membership?.role, "team.manage")} />
      <ConnectionsManager initial={initial} canManage={can(membership?.role, "connections.manage")} />
    </>
  );
}
