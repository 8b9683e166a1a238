import type { Metadata } from "next";
import { PageHeader } from "../../../components/layout/page-header";
import { AccountSettings } from "../../../components/settings/account/account-settings";
import { SettingsNav } from "../../../components/settings/settings-nav";
import { hasPassword, ownSessions } from "../../../lib/server/account";
import { requireTeam, requireUser } from "../../../lib/server/auth";
import { getMigratedDb } from "../../../lib/server/db/index";
import { listActiveSessions } from "../../../lib/server/db/sessions";
import { can } from "../../../lib/server/rbac";
import { secondFactorState } from "../../../lib/server/second-factor";
import type { SecurityDto } from "../../../lib/validations/account";

export const metadata: Metadata = { title: "Settings" };

// Settings → Account: the user's own name, password, sessions and second factor. Read server-side
// (no secret) and handed to the client cards as initial data; each change goes through /api/me/*.
export default async function SettingsPage() {
  const current = await requireUser();
  const team = await requireTeam(current);
  const db = await getMigratedDb();
  const [password, totp, live, sessions] = await Promise.all([
    hasPassword(db, current),
    secondFactorState(db, current.user.id),
    listActiveSessions(db, current.user.id),
    ownSessions(db, current),
  ]);
  const security: SecurityDto = {
    has_password: password,
    totp: {
      enabled: totp.enabled,
      confirmed_at: totp.confirmedAt?.toISOString() ?? null,
      enrolling: totp.enrolling,
      recovery_codes_left: totp.recoveryCodesLeft,
    },
    sessions: live.length,
  };
  return (
    <>
      <PageHeader title="Settings" description="Your account: how you appear to your team and how you sign in." />
      <SettingsNav current="account" isAdmin={can(team?.role, "team.manage")} />
      <AccountSettings
        user={{ name: current.user.name, email: current.user.email }}
        security={security}
        sessions={sessions}
      />
    </>
  );
}
