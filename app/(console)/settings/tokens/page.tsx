import type { Metadata } from "next";
import { Forbidden } from "../../../../components/layout/forbidden";
import { PageHeader } from "../../../../components/layout/page-header";
import { SettingsNav } from "../../../../components/settings/settings-nav";
import { ApiTokensManager } from "../../../../components/settings/tokens/api-tokens-manager";
import { apiTokensView } from "../../../../lib/server/api-tokens/manage";
import { requirePermission } from "../../../../lib/server/auth";
import { getMigratedDb } from "../../../../lib/server/db/index";
import { can } from "../../../../lib/server/rbac";

export const metadata: Metadata = { title: "API tokens" };

const TITLE = "API tokens";

// Settings → API tokens: the member's personal tokens for the team (an admin's: the whole team's).
// Read server-side (hints, never a token) and handed to the client as initial data; changes go
// through /api/tokens.
export default async function ApiTokensPage() {
  // The permission GET /api/tokens requires: every member of the team has it.
  const access = await requirePermission("team.read");
  if (!access.ok) return <Forbidden title={TITLE} detail={access.detail} />;
  const { team, current } = access;
  const initial = await apiTokensView(await getMigratedDb(), team, current.user);
  return (
    <>
      <PageHeader
        title={TITLE}
        description="Personal tokens for scripts, CI and agents: Baton's /api/v1 as you, in this team, under your role, spend caps and the audit log."
      />
      <SettingsNav current="tokens" isAdmin={can(team.role, "team.manage")} />
      <ApiTokensManager initial={initial} teamName={team.team.name} />
    </>
  );
}
