import type { Metadata } from "next";
import { PageHeader } from "../../../../components/layout/page-header";
import { SettingsNav } from "../../../../components/settings/settings-nav";
import { ApiTokensManager } from "../../../../components/settings/tokens/api-tokens-manager";
import { apiTokensView } from "../../../../lib/server/api-tokens/manage";
import { requireTeam, requireUser } from "../../../../lib/server/auth";
import { getMigratedDb } from "../../../../lib/server/db/index";
import { can } from "../../../../lib/server/rbac";

export const metadata: Metadata = { title: "API tokens" };

// Settings → API tokens: the member's personal tokens for the team (an admin's: the whole team's).
// Read server-side (hints, never a token) and handed to the client as initial data; changes go
// through /api/tokens.
export default async function ApiTokensPage() {
  const current = await requireUser();
  const team = await requireTeam(current);
  const initial = team ? await apiTokensView(await getMigratedDb(), team) : null;
  return (
    <>
      <PageHeader
        title="API tokens"
        description="Personal tokens for scripts, CI and agents: Baton's /api/v1 as you, in this team, under your role, spend caps and the audit log."
      />
      <SettingsNav current="tokens" isAdmin={can(team?.role, "team.manage")} />
      {team && initial ? (
        <ApiTokensManager initial={initial} teamName={team.team.name} />
      ) : (
        <p className="text-sm text-muted-foreground">
          You are not a member of a team yet, so you have no tokens to make.
        </p>
      )}
    </>
  );
}
