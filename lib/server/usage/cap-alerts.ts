import "server-only";
import { z } from "zod";
import { formatMicro, type SpendCap } from "../../usage/caps";
import { assertSafeStreamUrl, originList, postOutgoing, signStreamBody } from "../audit/stream";
import { decrypt, encrypt, randomToken } from "../crypto";
import type { Db } from "../db/index";
import { getTeam } from "../db/teams";
import { sendMail, mailConfigured } from "../mail";
import type { Resolver } from "../ssrf";
import type { CapAlert } from "./caps-job";

// Where a team's spend alerts go besides the console (the caps on /usage) and the audit log:
// - email to the team's owners and admins (for an API token's own cap, also the token's owner), when
//   Baton has SMTP (BATON_SMTP_URL) and the team did not turn it off;
// - a webhook: a URL the billing manager gives, POSTed as orkestr signs its webhooks
//   (`X-Orkestr-Signature: sha256=<HMAC-SHA256(secret, raw body)>`, `X-Orkestr-Event:
//   spend_cap.alert` or `spend_cap.pause_failed`), guarded against internal addresses when saved and
//   again when it connects (lib/server/ssrf.ts), tried three times. Its secret is shown once.
// An operator may allow internal receivers by origin in BATON_ALERT_WEBHOOK_ALLOW (tests do).

export const alertSecretAad = (teamId: string) => `spend_alert_settings:${teamId}:webhook_secret`;

const ATTEMPTS = 3;
const RETRY_MS = [1_000, 3_000];

export function alertAllowList(env: NodeJS.ProcessEnv = process.env): string[] {
  return originList(env.BATON_ALERT_WEBHOOK_ALLOW);
}

export interface AlertSettings {
  webhookUrl: string | null;
  hasSecret: boolean;
  email: boolean;
}

export const AlertSettingsBody = z
  .object({
    webhook_url: z.string().max(2048).nullable(),
    email: z.boolean({ error: "must be true or false" }),
    rotate_secret: z.literal(true),
  })
  .partial();

export async function getAlertSettings(db: Db, teamId: string): Promise<AlertSettings> {
  const row = await db
    .selectFrom("spend_alert_settings")
    .select(["webhook_url", "webhook_secret_ciphertext", "email"])
    .where("team_id", "=", teamId)
    .executeTakeFirst();
  return {
    webhookUrl: row?.webhook_url ?? null,
    hasSecret: Boolean(row?.webhook_secret_ciphertext),
    email: row ? Number(row.email) === 1 : true,
  };
}

export function alertSettingsView(s: AlertSettings, env: NodeJS.ProcessEnv = process.env) {
  return {
    webhook_url: s.webhookUrl,
    webhook_secret_set: s.hasSecret,
    email: s.email,
    email_configured: Boolean(env.BATON_SMTP_URL?.trim()),
  };
}

const urlOptions = (resolver?: Resolver) => ({
  resolver,
  allow: alertAllowList(),
  field: "webhook_url",
  sender: "Spend alerts",
  example: "https://alerts.example.com/baton",
});

/** Saves a change; the new signing secret (first URL, new URL, or rotated) is returned once. */
export async function updateAlertSettings(
  db: Db,
  teamId: string,
  change: z.output<typeof AlertSettingsBody>,
  by: string,
  opts: { now?: number; resolver?: Resolver } = {},
): Promise<{ before: AlertSettings; after: AlertSettings; secret: string | null }> {
  const before = await getAlertSettings(db, teamId);
  let webhookUrl = before.webhookUrl;
  if (change.webhook_url !== undefined)
    webhookUrl =
      change.webhook_url === null || change.webhook_url.trim() === ""
        ? null
        : (await assertSafeStreamUrl(change.webhook_url, urlOptions(opts.resolver))).href;
  const needSecret =
    webhookUrl !== null && (!before.hasSecret || webhookUrl !== before.webhookUrl || change.rotate_secret === true);
  const secret = needSecret ? `whsec_${randomToken(24)}` : null;
  const values = {
    webhook_url: webhookUrl,
    email: (change.email ?? before.email) ? 1 : 0,
    updated_by: by,
    updated_at: opts.now ?? Date.now(),
    ...(secret ? { webhook_secret_ciphertext: encrypt(secret, { aad: alertSecretAad(teamId) }) } : {}),
    ...(webhookUrl === null ? { webhook_secret_ciphertext: null } : {}),
  };
  await db
    .insertInto("spend_alert_settings")
    .values({ team_id: teamId, webhook_secret_ciphertext: null, ...values })
    .onConflict((oc) => oc.column("team_id").doUpdateSet(values))
    .execute();
  return { before, after: await getAlertSettings(db, teamId), secret };
}

/** The owners' and admins' addresses (enabled memberships of enabled accounts). */
async function recipients(db: Db, teamId: string): Promise<string[]> {
  const rows = await db
    .selectFrom("memberships")
    .innerJoin("users", "users.id", "memberships.user_id")
    .select("users.email")
    .where("memberships.team_id", "=", teamId)
    .where("memberships.role", "in", ["owner", "admin"])
    .where("memberships.disabled_at", "is", null)
    .where("users.disabled_at", "is", null)
    .execute();
  return rows.map((r) => r.email);
}

/** One sentence for a person: which cap, how far, and what happens next. */
export function alertText(teamName: string, alert: CapAlert, memberEmail: string | null): string {
  const { cap, token } = alert;
  if (token && alert.kind === "threshold")
    return (
      `${teamName}: ${alert.threshold} % of the monthly spend cap of the API token "${token.name}" ` +
      `(${memberEmail ?? "a member"}'s) reached (${formatMicro(alert.spentMicro)} of ${formatMicro(cap.limitMicro)}, ` +
      `UTC ${alert.windowKey}).` +
      (alert.threshold === 100
        ? " Baton now refuses new sandboxes, resumes and keep-alives with the token and pauses its running sandboxes;" +
          " a token's cap cannot be raised (make a new token)."
        : "")
    );
  const whose = cap.userId ? `${memberEmail ?? "a member"}'s` : `the team's`;
  const window = cap.window === "month" ? "monthly" : "daily";
  if (alert.kind === "pause_failed" && alert.cause === "no_pause_connection")
    return (
      `${teamName}: ${whose} ${window} spend cap of ${formatMicro(cap.limitMicro)} is reached, but Baton could not ` +
      `pause the running sandboxes: ${alert.failed?.[0]?.detail ?? "no connection may pause them"} They keep ` +
      `running and spending; pause or terminate them yourself.`
    );
  if (alert.kind === "pause_failed")
    return (
      `${teamName}: ${whose} ${window} spend cap of ${formatMicro(cap.limitMicro)} is reached and Baton paused what ` +
      `it could, but the orkestr API refused to pause ${alert.failed?.length ?? 0} sandbox(es): ` +
      `${(alert.failed ?? []).map((f) => `${f.id} (${f.detail})`).join("; ")}. They keep running and spending; ` +
      `pause or terminate them yourself.`
    );
  const acts =
    alert.threshold === 100
      ? cap.action === "block"
        ? " Baton now refuses new sandboxes, resumes and keep-alives in its scope; running sandboxes keep running."
        : cap.action === "pause"
          ? " Baton pauses its running sandboxes and refuses new ones until the cap is raised."
          : " The cap only alerts: nothing is stopped."
      : "";
  return (
    `${teamName}: ${alert.threshold} % of ${whose} ${window} spend cap reached ` +
    `(${formatMicro(alert.spentMicro)} of ${formatMicro(cap.limitMicro)}, UTC ${alert.windowKey}).${acts}`
  );
}

async function memberEmail(db: Db, cap: SpendCap): Promise<string | null> {
  if (!cap.userId) return null;
  const u = await db.selectFrom("users").select("email").where("id", "=", cap.userId).executeTakeFirst();
  return u?.email ?? null;
}

/** Sends an alert by the team's channels; how each went (the job records it with the alert). */
export async function notifyCapAlert(
  db: Db,
  alert: CapAlert,
  opts: { resolver?: Resolver; sleep?: (ms: number) => Promise<void> } = {},
): Promise<Record<string, string>> {
  const team = await getTeam(db, alert.teamId);
  if (!team) return { all: "team gone" };
  const settings = await getAlertSettings(db, alert.teamId);
  const text = alertText(team.name, alert, await memberEmail(db, alert.cap));
  const outcome: Record<string, string> = {};

  if (!settings.email) outcome.email = "off";
  else if (!mailConfigured()) outcome.email = "not configured";
  else {
    // A token's cap also tells the token's owner (who may be neither owner nor admin).
    const owner = alert.token ? await memberEmail(db, alert.cap) : null;
    const to = [...new Set([...(await recipients(db, alert.teamId)), ...(owner ? [owner] : [])])];
    const results = await Promise.all(
      to.map((address) =>
        sendMail({
          to: address,
          subject:
            alert.kind === "pause_failed"
              ? `[Baton] ${team.name}: sandboxes could not be paused for a spend cap`
              : `[Baton] ${team.name}: ${alert.threshold} % of ${alert.token ? "an API token's" : "a"} spend cap`,
          text: `${text}\n\nSee the team's usage and caps on Baton's Usage page.\n`,
        }),
      ),
    );
    outcome.email = `${results.filter((r) => r.sent).length} of ${to.length} sent`;
  }

  if (settings.webhookUrl) {
    const row = await db
      .selectFrom("spend_alert_settings")
      .select("webhook_secret_ciphertext")
      .where("team_id", "=", alert.teamId)
      .executeTakeFirst();
    const type = alert.kind === "pause_failed" ? "spend_cap.pause_failed" : "spend_cap.alert";
    const body = JSON.stringify({
      id: `evt_${randomToken(12)}`,
      type,
      created_at: new Date().toISOString(),
      data: {
        team: { id: team.id, name: team.name, slug: team.slug },
        cap: {
          id: alert.cap.id,
          subject: alert.token ? "api_token" : (alert.cap.userId ?? "team"),
          ...(alert.token ? { token: { id: alert.token.id, name: alert.token.name, owner: alert.cap.userId } } : {}),
          window: alert.cap.window,
          limit_micro: alert.cap.limitMicro,
          action: alert.cap.action,
        },
        window_key: alert.windowKey,
        threshold: alert.threshold,
        spent_micro: alert.spentMicro,
        failed: alert.failed ?? [],
        text,
      },
    });
    const secret = row?.webhook_secret_ciphertext
      ? decrypt(row.webhook_secret_ciphertext, { aad: alertSecretAad(alert.teamId) })
      : null;
    const sleep = opts.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
    let last = "";
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (attempt > 0) await sleep(RETRY_MS[attempt - 1] ?? 3_000);
      try {
        const url = await assertSafeStreamUrl(settings.webhookUrl, urlOptions(opts.resolver));
        const res = await postOutgoing(
          url,
          alertAllowList(),
          {
            method: "POST",
            headers: {
              "content-type": "application/json",
              "user-agent": "Baton-Spend-Alerts/1",
              "x-orkestr-event": type,
              "x-orkestr-delivery": `dlv_${randomToken(12)}`,
              ...(secret ? { "x-orkestr-signature": signStreamBody(secret, body) } : {}),
            },
            body,
          },
          { resolver: opts.resolver },
        );
        await res.body?.cancel().catch(() => undefined);
        if (res.status >= 200 && res.status < 300) {
          last = `delivered (HTTP ${res.status})`;
          break;
        }
        last = `HTTP ${res.status}`;
      } catch (err) {
        last = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
      }
    }
    outcome.webhook = last.startsWith("delivered") ? last : `failed after ${ATTEMPTS} attempts: ${last}`;
  }
  return outcome;
}
