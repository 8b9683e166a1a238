import { getMigratedDb } from "../../../../lib/server/db/index";
import { route } from "../../../../lib/server/route";
import {
  AlertSettingsBody,
  alertSettingsView,
  getAlertSettings,
  updateAlertSettings,
} from "../../../../lib/server/usage/cap-alerts";

export const runtime = "nodejs";

// GET /api/usage/alerts – where the team's spend alerts go: email (to owners and admins, when SMTP
// is configured) and a webhook URL (never its secret). Billing managers only, as is the change.
export const GET = route({ auth: "user", perm: "billing.manage" }, async ({ team }) =>
  alertSettingsView(await getAlertSettings(await getMigratedDb(), team!.team.id)),
);

// PATCH /api/usage/alerts {webhook_url?, email?, rotate_secret?} – the URL passes the SSRF guard;
// a new signing secret (first URL, new URL, rotate) is answered once as `webhook_secret`. Audited.
export const PATCH = route(
  { auth: "user", perm: "billing.manage", body: AlertSettingsBody },
  async ({ team, user, body, audit }) => {
    const db = await getMigratedDb();
    const teamId = team!.team.id;
    const { before, after, secret } = await updateAlertSettings(db, teamId, body, user.id);
    await audit("spend_alert.settings_update", {
      targetType: "team",
      targetId: teamId,
      data: {
        before: alertSettingsView(before),
        after: alertSettingsView(after),
        ...(secret ? { new_signing_key: true } : {}),
      },
    });
    return { ...alertSettingsView(after), webhook_secret: secret };
  },
);
