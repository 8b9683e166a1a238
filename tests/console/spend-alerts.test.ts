import "server-only";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { GET as getAlerts, PATCH as patchAlerts } from "../../app/api/usage/alerts/route";
import { listAuditEvents } from "../../lib/server/db/audit";
import { addMember, getTeam } from "../../lib/server/db/teams";
import { testBackends } from "../../lib/server/db/test-backends";
import { verifySignedEvent } from "../../lib/server/webhook-signature";
import { notifyCapAlert } from "../../lib/server/usage/cap-alerts";
import { enforceTeamCaps } from "../../lib/server/usage/caps-job";
import { setCap } from "../../lib/server/usage/caps-store";
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
});
