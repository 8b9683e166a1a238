import { getMigratedDb } from "../../../../lib/server/db/index";
import { AuditSettingsBody } from "../../../../lib/server/audit/schemas";
import {
  auditSettingsView,
  getAuditSettings,
  streamStatus,
  updateAuditSettings,
} from "../../../../lib/server/audit/stream";
import { route } from "../../../../lib/server/route";

export const runtime = "nodejs";

// GET /api/audit/settings – the team's retention and SIEM stream (never the secret), with the
// stream's queue. Readers of the log may see them; only owners change them (audit.manage).
export const GET = route({ auth: "user", perm: "audit.read" }, async ({ team }) => {
  const db = await getMigratedDb();
  const teamId = team!.team.id;
  return { settings: auditSettingsView(await getAuditSettings(db, teamId)), stream: await streamStatus(db, teamId) };
});

// PATCH /api/audit/settings {retention_days?, siem_url?, siem_enabled?, rotate_secret?} – the SIEM URL
// passes the SSRF guard; a new signing secret (first URL, new URL or rotate) is answered once as
// `siem_secret` and never again. The change is audited with before and after.
export const PATCH = route(
  { auth: "user", perm: "audit.manage", body: AuditSettingsBody },
  async ({ team, body, audit }) => {
    const db = await getMigratedDb();
    const teamId = team!.team.id;
    const { before, after, secret } = await updateAuditSettings(db, teamId, {
      retentionDays: body.retention_days,
      siemUrl: body.siem_url,
      siemEnabled: body.siem_enabled,
      rotateSecret: body.rotate_secret,
    });
    await audit("audit.settings_update", {
      targetType: "team",
      targetId: teamId,
      data: {
        before: auditSettingsView(before),
        after: auditSettingsView(after),
        ...(secret ? { new_signing_key: true } : {}),
      },
    });
    return { settings: auditSettingsView(after), siem_secret: secret, stream: await streamStatus(db, teamId) };
  },
);
