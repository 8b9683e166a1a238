import type { Metadata } from "next";
import { headers } from "next/headers";
import { Forbidden } from "../../../../components/layout/forbidden";
import { PageHeader } from "../../../../components/layout/page-header";
import { SsoSettingsView } from "../../../../components/settings/sso/sso-settings";
import { requirePermission } from "../../../../lib/server/auth";
import { getMigratedDb } from "../../../../lib/server/db/index";
import { ssoSettingsView } from "../../../../lib/server/sso/settings";

export const metadata: Metadata = { title: "Single sign-on" };

// Settings → SSO: the team's OpenID Connect provider (team.manage, as GET /api/team/sso). Read
// server-side (the secret only as set / not set) and handed to the client form as initial data.
export default async function SsoSettingsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const access = await requirePermission("team.manage");
  if (!access.ok) return <Forbidden title="Single sign-on" detail={access.detail} />;
  const initial = await ssoSettingsView(
    await getMigratedDb(),
    access.team.team.id,
    access.current.user.id,
    await headers(),
  );
  const test = (await searchParams).test;
  return (
    <>
      <PageHeader
        title="Single sign-on"
        description={`How people of ${access.team.team.name} sign in with your identity provider (OpenID Connect).`}
      />
      <SsoSettingsView initial={initial} testOutcome={typeof test === "string" ? test : null} />
    </>
  );
}
