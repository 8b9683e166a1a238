import "server-only";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { GET as getAlerts, PATCH as patchAlerts } from "../../app/api/usage/alerts/route";
import { enforceTokenCaps } from "../../lib/server/api-tokens/caps-job";
import { insertApiToken } from "../../lib/server/db/api-tokens";
import { listAuditEvents } from "../../lib/server/db/audit";
import { addMember, getTeam } from "../../lib/server/db/teams";
import { testBackends } from "../../lib/server/db/test-backends";
import { verifySignedEvent } from "../../lib/server/webhook-signature";
import { notifyCapAlert } from "../../lib/server/usage/cap-alerts";
import { enforceTeamCaps } from "../../lib/server/usage/caps-job";
import { setCap } from "../../lib/server/usage/caps-store";
import { getUsageRates } from "../../lib/server/usage/rates";
import { startSmtpServer, type TestSmtpServer } from "../helpers/smtp-server";
import { jsonOf, makeUser, noParams, request, sessionCookie, useConsoleDb } from "./helpers";

// Spend alerts by their real channels: mail to a real SMTP server the test starts (read back), and
// a signed webhook POSTed to a loopback receiver the test starts and the operator setting allows.

interface Received {
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

describe.each(testBackends)("spend alerts on $name", (backend) => {
  const ctx = useConsoleDb(backend);
  let smtp: TestSmtpServer;
  let receiver: Server;
  let receiverUrl = "";
  const received: Received[] = [];
  let answer = 204;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    receiver = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        received.push({ headers: req.headers, body });
        res.writeHead(answer).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/alerts`;
  });
  afterAll(async () => {
    await smtp.close();
    await new Promise((r) => receiver.close(r));
  });

  async function teamWithAdmin() {
    const owner = await makeUser(ctx.db(), "owner");
    const admin = await makeUser(ctx.db(), null);
    await addMember(ctx.db(), { teamId: owner.teamId!, userId: admin.user.id, role: "admin" });
    const slug = (await getTeam(ctx.db(), owner.teamId!))!.slug;
    const { cookie } = await sessionCookie(ctx.db(), owner.user.id);
    const patch = (body: object) =>
      patchAlerts(
        request("/api/usage/alerts", { method: "PATCH", cookie, headers: { "x-baton-team": slug }, body }),
        noParams,
      );
    return { owner, admin, teamId: owner.teamId!, patch, cookie, slug };
  }

  it("refuses an internal webhook URL unless the operator allows its origin; the secret is shown once", async () => {
    // (Env stubs are set per test and never all unstubbed: the console harness stubs its own.)
    vi.stubEnv("BATON_ALERT_WEBHOOK_ALLOW", "");
    const t = await teamWithAdmin();
    const internal = await t.patch({ webhook_url: receiverUrl.replace("http:", "https:") });
    expect(internal.status).toBe(422);
    expect(await jsonOf(internal)).toMatchObject({
      code: "validation_error",
      errors: { webhook_url: expect.stringContaining("Spend alerts may only go to public addresses") },
    });
    vi.stubEnv("BATON_ALERT_WEBHOOK_ALLOW", new URL(receiverUrl).origin);
    const saved = await t.patch({ webhook_url: receiverUrl });
    expect(saved.status).toBe(200);
    const body = await jsonOf(saved);
    expect(body).toMatchObject({ webhook_url: receiverUrl, webhook_secret_set: true, email: true });
    expect(body.webhook_secret).toMatch(/^whsec_/);
    const again = await jsonOf(
      await getAlerts(
        request("/api/usage/alerts", { cookie: t.cookie, headers: { "x-baton-team": t.slug } }),
        noParams,
      ),
    );
    expect(again).not.toHaveProperty("webhook_secret");
    expect(JSON.stringify(again)).not.toContain(String(body.webhook_secret));
    const audited = (await listAuditEvents(ctx.db(), { teamId: t.teamId })).filter(
      (e) => e.action === "spend_alert.settings_update",
    );
    // The refused URL changed nothing (an input mistake is not audited); the saved one is.
    expect(audited.map((e) => e.result)).toEqual(["ok"]);
    expect(JSON.stringify(audited)).not.toContain(String(body.webhook_secret));
  });

  it("a crossed threshold mails the owners and admins and POSTs a signed event, once", async () => {
    vi.stubEnv("BATON_SMTP_URL", smtp.url);
    vi.stubEnv("BATON_ALERT_WEBHOOK_ALLOW", new URL(receiverUrl).origin);
    const t = await teamWithAdmin();
    const secret = String((await jsonOf(await t.patch({ webhook_url: receiverUrl }))).webhook_secret);
    await setCap(ctx.db(), {
      teamId: t.teamId,
      userId: null,
      window: "month",
      limitMicro: 10_000_000,
      action: "block",
      by: t.owner.user.id,
    });
    received.length = 0;
    const deps = {
      spend: async () => ({ team: 8_500_000, byUser: new Map<string, number>() }),
      pause: async () => ({ paused: [], failed: [] }),
      notify: (alert: Parameters<typeof notifyCapAlert>[1]) => notifyCapAlert(ctx.db(), alert),
    };
    const [decision] = await enforceTeamCaps(ctx.db(), t.teamId, deps);
    expect(decision!.alerts).toEqual([50, 80]);
    for (const who of [t.owner.user.email, t.admin.user.email]) {
      const mail = await smtp.waitFor(who);
      expect(mail.subject).toMatch(/% of a spend cap$/);
      expect(mail.text).toMatch(/of the team's monthly spend cap reached \(€8\.50 of €10\.00, UTC \d{4}-\d{2}\)/);
    }
    expect(received).toHaveLength(2);
    for (const r of received) {
      expect(r.headers["x-orkestr-event"]).toBe("spend_cap.alert");
      const verified = verifySignedEvent({
        secret,
        body: r.body,
        signature: String(r.headers["x-orkestr-signature"]),
        eventType: String(r.headers["x-orkestr-event"]),
      });
      expect(verified.ok, JSON.stringify(verified)).toBe(true);
    }
    expect(received.map((r) => (JSON.parse(r.body) as { data: { threshold: number } }).data.threshold).sort()).toEqual([
      50, 80,
    ]);
    // The job again with the same figure: nothing new is sent.
    await enforceTeamCaps(ctx.db(), t.teamId, deps);
    expect(received).toHaveLength(2);
    const alerts = (await listAuditEvents(ctx.db(), { teamId: t.teamId })).filter(
      (e) => e.action === "spend_cap.alert",
    );
    expect(alerts[0]).toMatchObject({ data: { channels: { email: "2 of 2 sent", webhook: "delivered (HTTP 204)" } } });
  });

  it("a receiver that keeps failing is tried three times and said so", async () => {
    vi.stubEnv("BATON_SMTP_URL", "");
    vi.stubEnv("BATON_ALERT_WEBHOOK_ALLOW", new URL(receiverUrl).origin);
    const t = await teamWithAdmin();
    const saved = await t.patch({ webhook_url: receiverUrl, email: false });
    expect(saved.status, JSON.stringify(await jsonOf(saved.clone()))).toBe(200);
    const cap = await setCap(ctx.db(), {
      teamId: t.teamId,
      userId: null,
      window: "day",
      limitMicro: 1_000_000,
      action: "alert",
      by: t.owner.user.id,
    });
    received.length = 0;
    answer = 500;
    try {
      const outcome = await notifyCapAlert(
        ctx.db(),
        {
          teamId: t.teamId,
          cap: cap.after,
          kind: "threshold",
          threshold: 50,
          spentMicro: 500_000,
          windowKey: "2026-12-05",
        },
        { sleep: async () => undefined },
      );
      expect(outcome).toEqual({ email: "off", webhook: "failed after 3 attempts: HTTP 500" });
      expect(received).toHaveLength(3);
    } finally {
      answer = 204;
    }
  });

  it("an API token's own cap alerts at 50, 80 and 100 % once each per month, to the token's owner too, audited", async () => {
    vi.stubEnv("BATON_SMTP_URL", smtp.url);
    vi.stubEnv("BATON_ALERT_WEBHOOK_ALLOW", new URL(receiverUrl).origin);
    const t = await teamWithAdmin();
    const secret = String((await jsonOf(await t.patch({ webhook_url: receiverUrl }))).webhook_secret);
    // The token's owner is a plain member: not an owner or admin, still told about their token.
    const dev = await makeUser(ctx.db(), null);
    await addMember(ctx.db(), { teamId: t.teamId, userId: dev.user.id, role: "member" });
    const token = await insertApiToken(ctx.db(), {
      teamId: t.teamId,
      userId: dev.user.id,
      name: "nightly agent",
      hash: `hash-${dev.user.id}`,
      hint: "abcd",
      scope: "write",
      expiresAt: null,
      spendCapMicro: 10_000_000,
    });
    // Fake usage: the usage record of a sandbox Baton made with the token, one row per day.
    const sandboxId = `sbx-${token.id}`;
    await ctx
      .db()
      .insertInto("api_token_sandboxes")
      .values({ team_id: t.teamId, sandbox_id: sandboxId, token_id: token.id, created_at: Date.UTC(2026, 11, 1) })
      .execute();
    const rates = await getUsageRates(ctx.db(), t.teamId);
    const spend = async (date: string, micro: number) =>
      ctx
        .db()
        .insertInto("usage_daily")
        .values({
          team_id: t.teamId,
          date,
          sandbox_id: sandboxId,
          user_id: dev.user.id,
          template: null,
          cpu_ms: Math.round((micro * 3_600_000) / rates.vcpu_hour_micro),
          gib_ms: 0,
        })
        .execute();
    const december = Date.UTC(2026, 11, 20, 12);
    const run = () => enforceTokenCaps(ctx.db(), t.teamId, null, december);
    const tokenAlerts = async () =>
      (await listAuditEvents(ctx.db(), { teamId: t.teamId, limit: 200 })).filter(
        (e) => e.action === "spend_cap.alert" && e.targetId === token.id,
      );
    const mailsTo = (who: string) => smtp.messages.filter((m) => m.to.includes(who) && /API token's/.test(m.subject));
    received.length = 0;

    await spend("2026-12-02", 5_500_000);
    expect((await run()).map((d) => d.alerts)).toEqual([[50]]);
    for (const who of [dev.user.email, t.owner.user.email, t.admin.user.email]) {
      const mail = await smtp.waitFor(who);
      expect(mail.subject).toMatch(/50 % of an API token's spend cap$/);
    }
    expect(mailsTo(dev.user.email)[0]!.text).toContain(
      `50 % of the monthly spend cap of the API token "nightly agent" (${dev.user.email}'s) reached (€5.50 of €10.00, UTC 2026-12)`,
    );
    expect(received).toHaveLength(1);
    const event = JSON.parse(received[0]!.body) as { type: string; data: Record<string, unknown> };
    expect(
      verifySignedEvent({
        secret,
        body: received[0]!.body,
        signature: String(received[0]!.headers["x-orkestr-signature"]),
        eventType: String(received[0]!.headers["x-orkestr-event"]),
      }).ok,
    ).toBe(true);
    expect(event).toMatchObject({
      type: "spend_cap.alert",
      data: {
        threshold: 50,
        window_key: "2026-12",
        cap: { id: token.id, subject: "api_token", limit_micro: 10_000_000, window: "month" },
      },
    });

    await spend("2026-12-03", 3_000_000);
    expect((await run()).map((d) => d.alerts)).toEqual([[80]]);
    await spend("2026-12-04", 2_000_000);
    const reached = await run();
    expect(reached).toMatchObject([{ alerts: [100], reached: true }]);
    // Again in the same month with the same figure: nothing new is sent or audited.
    expect(await run()).toEqual([]);
    for (const who of [dev.user.email, t.owner.user.email, t.admin.user.email])
      expect(mailsTo(who).map((m) => m.subject.match(/(\d+) %/)![1])).toEqual(["50", "80", "100"]);
    expect(mailsTo(dev.user.email)[2]!.text).toMatch(/pauses its running sandboxes/);
    expect(received.map((r) => (JSON.parse(r.body) as { data: { threshold: number } }).data.threshold)).toEqual([
      50, 80, 100,
    ]);
    const audited = await tokenAlerts();
    expect(audited.map((e) => (e.data as { threshold?: number } | null)?.threshold).sort()).toEqual([100, 50, 80]);
    expect(audited.find((e) => (e.data as { threshold?: number } | null)?.threshold === 50)).toMatchObject({
      targetType: "api_token",
      credential: "spend-caps-job",
      data: {
        subject: "api_token",
        name: "nightly agent",
        owner: dev.user.id,
        window_key: "2026-12",
        limit_micro: 10_000_000,
        spent_micro: 5_500_000,
        channels: { email: "3 of 3 sent", webhook: "delivered (HTTP 204)" },
      },
    });

    // A new month: spending from zero again, and the alerts go out again; two runs at once send it once.
    const january = Date.UTC(2027, 0, 3, 12);
    await spend("2027-01-02", 6_000_000);
    const both = await Promise.all([0, 1].map(() => enforceTokenCaps(ctx.db(), t.teamId, null, january)));
    expect(both.flat().map((d) => d.alerts)).toEqual([[50]]);
    expect(await enforceTokenCaps(ctx.db(), t.teamId, null, january)).toEqual([]);
    expect(mailsTo(dev.user.email).map((m) => m.subject.match(/(\d+) %/)![1])).toEqual(["50", "80", "100", "50"]);
    expect(
      (await tokenAlerts())
        .filter((e) => (e.data as { window_key?: string } | null)?.window_key === "2027-01")
        .map((e) => (e.data as { threshold?: number } | null)?.threshold),
    ).toEqual([50]);
  });
});
