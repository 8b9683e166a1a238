import type { Metadata } from "next";
import { Forbidden } from "../../../../components/layout/forbidden";
import { PageHeader } from "../../../../components/layout/page-header";
import { SettingsNav } from "../../../../components/settings/settings-nav";
import { TeamSettings } from "../../../../components/settings/team/team-settings";
import { requirePermission } from "../../../../lib/server/auth";
import { actingCan, can } from "../../../../lib/server/rbac";

export const metadata: Metadata = { title: "Team settings" };

// Settings → Team (admins and owners): the team's name and slug; whether admins set spend caps and
// prices (owners decide); deleting the team (owners only).
// The same permissions as PATCH and DELETE /api/team: a page never offers what its API refuses.
export default async function TeamSettingsPage() {
  const access = await requirePermission("team.manage");
  if (!access.ok) return <Forbidden title="Team settings" detail={access.detail} />;
  const { team, role } = access.team;
  return (
    <>
      <PageHeader title="Settings" description={`The settings of ${team.name}, the team you are working in.`} />
      <SettingsNav current="team" isAdmin />
      <TeamSettings
        team={{ id: team.id, name: team.name, slug: team.slug }}
        canDelete={can(role, "team.delete")}
        hasConnection={access.team.connection !== null}
        billing={{ adminsManage: team.adminsManageBilling, canDelegate: actingCan(access.team, "billing.delegate") }}
      />
    </>
  );
}
