import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { recordAudit } from "../db/audit";
import { migrateToLatest, type Db } from "../db/index";
import { createTeamWithOwner } from "../db/teams";
import { testBackends, type TestDatabase } from "../db/test-backends";
import { createUser } from "../db/users";
import { verifyWebhook } from "../webhook-signature";
import {
  AUDIT_STREAM,
  assertSafeStreamUrl,
  backoffMs,
  drainAuditOutbox,
  streamStatus,
  updateAuditSettings,
} from "./stream";

// The SIEM stream against a real HTTP receiver this test starts on loopback. Loopback is refused
// by the SSRF guard unless the operator lists the origin in BATON_AUDIT_STREAM_ALLOW (what the engine's
// ORKESTR_ENGINE_WEBHOOK_ALLOW is for its webhooks): the test lists its own receiver's origin only.

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

function receiver(status: () => number) {
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(status()).end();
    });
  });
  return {
    got,
    async start(): Promise<string> {
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}

let n = 0;
for (const backend of testBackends) {
  describe(`audit stream on ${backend.name}`, () => {
    let t: TestDatabase;
    let db: Db;
    let ok: ReturnType<typeof receiver>;
    let failing: ReturnType<typeof receiver>;
    let okOrigin: string;
    let failingOrigin: string;
    let failUntil = 0;
    beforeAll(async () => {
      vi.stubEnv("BATON_SECRET", "s".repeat(48));
      t = await backend.open();
      db = t.db;
      await migrateToLatest(db);
      ok = receiver(() => 204);
      failing = receiver(() => (failing.got.length <= failUntil ? 503 : 200));
      okOrigin = await ok.start();
      failingOrigin = await failing.start();
      vi.stubEnv("BATON_AUDIT_STREAM_ALLOW", `${okOrigin}, ${failingOrigin}`);
    });
    afterAll(async () => {
      await ok.stop();
      await failing.stop();
      await t.close();
      vi.unstubAllEnvs();
    });

    async function team() {
      const owner = await createUser(db, { email: `siem-${++n}-${Date.now()}@example.test`, passwordHash: null });
      const { team } = await createTeamWithOwner(db, { name: "S", slug: `s-${n}-${Date.now()}`, ownerId: owner.id });
      return { owner, teamId: team.id };
    }

    it("POSTs each new row once, signed as orkestr signs webhooks, and only for teams with the stream on", async () => {
      const { owner, teamId } = await team();
      const quiet = await team();
      const { secret } = await updateAuditSettings(db, teamId, { siemUrl: `${okOrigin}/ingest`, siemEnabled: true });
      expect(secret).toMatch(/^whsec_/);
      const e1 = await recordAudit(db, {
        action: "sandbox.create",
        teamId,
        userId: owner.id,
        targetType: "sandbox",
        targetId: "sbx_9",
      });
      const e2 = await recordAudit(db, {
        action: "sandbox.terminate",
        teamId,
        userId: owner.id,
        data: { token: "ork_secret" },
      });
      await recordAudit(db, { action: "sandbox.create", teamId: quiet.teamId });
      const before = ok.got.length;
      // Two instances drain at once: each row still goes out once.
      const [a, b] = await Promise.all([
        drainAuditOutbox(db, { holder: "instance-a" }),
        drainAuditOutbox(db, { holder: "instance-b" }),
      ]);
      expect((a?.sent ?? 0) + (b?.sent ?? 0)).toBe(2);
      const mine = ok.got.slice(before);
      expect(mine).toHaveLength(2);
      const bodies = mine.map((m) => {
        const v = verifyWebhook({
          secret: secret!,
          body: m.body,
          signature: m.headers["x-orkestr-signature"] as string,
          eventType: m.headers["x-orkestr-event"] as string,
        });
        expect(v.ok).toBe(true);
        expect(m.headers["x-orkestr-delivery"]).toMatch(/^dlv_/);
        return JSON.parse(m.body) as { id: string; type: string; data: { id: string; action: string; data: unknown } };
      });
      expect(bodies.map((b) => b.data.id).sort()).toEqual([e1.id, e2.id].sort());
      expect(bodies.every((b) => b.type === "audit.event")).toBe(true);
      expect(JSON.stringify(bodies)).not.toContain("ork_secret");
      // A wrong secret does not verify.
      expect(
        verifyWebhook({
          secret: "whsec_other",
          body: mine[0]!.body,
          signature: mine[0]!.headers["x-orkestr-signature"] as string,
        }).ok,
      ).toBe(false);
      // Nothing left; a second pass sends nothing.
      expect(await drainAuditOutbox(db, { holder: "instance-a" })).toMatchObject({ sent: 0 });
      expect(ok.got.length).toBe(before + 2);

      // Without the lease (two senders that both think they hold it), the per-row claim still sends each once.
      await recordAudit(db, { action: "snapshot.create", teamId });
      await recordAudit(db, { action: "snapshot.delete", teamId });
      const [c, d] = await Promise.all([
        drainAuditOutbox(db, { holder: "c", leased: true }),
        drainAuditOutbox(db, { holder: "d", leased: true }),
      ]);
      expect((c?.sent ?? 0) + (d?.sent ?? 0)).toBe(2);
      expect(ok.got.length).toBe(before + 4);
    });

    it("retries a failing receiver with backoff until it answers, and gives up after the last attempt", async () => {
      const { teamId } = await team();
      await updateAuditSettings(db, teamId, { siemUrl: `${failingOrigin}/hook`, siemEnabled: true });
      failUntil = failing.got.length + 2; // the next two POSTs get 503
      const e = await recordAudit(db, { action: "volume.delete", teamId, targetType: "volume", targetId: "vol_1" });
      let now = Date.now();
      expect(await drainAuditOutbox(db, { now, holder: "h", leased: true })).toMatchObject({ sent: 0, failed: 1 });
      expect(await streamStatus(db, teamId)).toMatchObject({
        pending: 1,
        last_error: expect.stringMatching(/HTTP 503/),
      });
      // Not due again before its backoff.
      expect(await drainAuditOutbox(db, { now: now + 10, holder: "h", leased: true })).toMatchObject({
        sent: 0,
        failed: 0,
      });
      now += backoffMs(1);
      expect(await drainAuditOutbox(db, { now, holder: "h", leased: true })).toMatchObject({ failed: 1 });
      now += backoffMs(2);
      expect(await drainAuditOutbox(db, { now, holder: "h", leased: true })).toMatchObject({ sent: 1 });
      const delivered = failing.got.filter((g) => g.body.includes(e.id));
      expect(delivered).toHaveLength(3);
      expect(await streamStatus(db, teamId)).toMatchObject({ pending: 0, given_up: 0 });

      // A receiver that never answers well: given up after maxAttempts, kept with its error.
      failUntil = Number.MAX_SAFE_INTEGER;
      await recordAudit(db, { action: "volume.create", teamId });
      for (let i = 1; i <= AUDIT_STREAM.maxAttempts; i++) {
        await drainAuditOutbox(db, { now, holder: "h", leased: true });
        now += backoffMs(i);
      }
      expect(await streamStatus(db, teamId)).toMatchObject({ pending: 0, given_up: 1 });
    });

    it("refuses internal addresses when saved and again when sent (an allowed origin only by the operator's list)", async () => {
      for (const url of [
        "https://10.1.2.3/x",
        "https://[::1]/x",
        "https://169.254.169.254/latest",
        "http://siem.example.com/",
      ]) {
        await expect(assertSafeStreamUrl(url, { allow: [] }), url).rejects.toMatchObject({ status: 422 });
      }
      await expect(
        assertSafeStreamUrl("https://internal.example/x", {
          allow: [],
          resolver: async () => [{ address: "192.168.1.5", family: 4 }],
        }),
      ).rejects.toThrow(/192\.168\.1\.5/);
      await expect(
        assertSafeStreamUrl("https://siem.example/x", {
          allow: [],
          resolver: async () => [{ address: "93.184.215.14", family: 4 }],
        }),
      ).resolves.toBeInstanceOf(URL);

      // Saved while allowed, then the operator takes the origin off the list: the send is refused, no request made.
      const { teamId } = await team();
      await updateAuditSettings(db, teamId, { siemUrl: `${okOrigin}/later`, siemEnabled: true });
      await recordAudit(db, { action: "webhook.create", teamId });
      vi.stubEnv("BATON_AUDIT_STREAM_ALLOW", "");
      const before = ok.got.length;
      expect(await drainAuditOutbox(db, { holder: "h", leased: true })).toMatchObject({ sent: 0, failed: 1 });
      expect(ok.got.length).toBe(before);
      expect((await streamStatus(db, teamId)).last_error).toMatch(/public addresses|https/);
      vi.stubEnv("BATON_AUDIT_STREAM_ALLOW", `${okOrigin}, ${failingOrigin}`);
    });
  });
}
