import "server-only";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as receive } from "../../app/api/hooks/[id]/route";
import { startEngine, type EngineHandle } from "../../engine/test/helpers/engine";
import { upsertConnection } from "../../lib/server/db/connections";
import { testBackends } from "../../lib/server/db/test-backends";
import { newReceiverId, saveReceiver } from "../../lib/server/hooks/store";
import { makeUser, uniq, useConsoleDb } from "./helpers";

// A real engine delivering to Baton's receiving endpoint over HTTP, and then redelivering from its
// delivery log: the redelivery (a new delivery id, the same event and bytes, signed again) must be
// answered 200 "duplicate", so the engine records it as a success rather than a failure that counts
// towards auto-disabling the webhook, and the event is still recorded once.
//
// The engine reaches the route handler through a small loopback server standing in for the console
// server's front door: it writes the client address header and the console's own Host name
// (http://baton.test, tests/console/helpers.ts), as the front door and a BATON_URL would.

interface DeliveryRecord {
  id: string;
  event_id: string;
  status: string;
  attempts: number;
  response_status: number | null;
  response_body_excerpt: string | null;
}

let engine: EngineHandle;
let server: http.Server;
let origin = "";

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
      headers.set("host", "baton.test");
      headers.set("x-baton-client-ip", "127.0.0.1");
      const id = decodeURIComponent((req.url ?? "").replace(/^\/api\/hooks\//, ""));
      const request = new Request(`http://baton.test${req.url}`, {
        method: req.method,
        headers,
        body: Buffer.concat(chunks),
      });
      void receive(request, { params: Promise.resolve({ id }) }).then(async (answer) => {
        res.writeHead(answer.status, { "content-type": "application/json" }).end(await answer.text());
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  engine = await startEngine({ env: { ORKESTR_ENGINE_WEBHOOK_ALLOW: origin } });
}, 60_000);
// SQLite: the engine round trip is the subject here; the receiver's store runs on both backends elsewhere.
const ctx = useConsoleDb(testBackends[0]!);
afterAll(async () => {
  await engine?.stop();
  if (engine?.dataDir) fs.rmSync(engine.dataDir, { recursive: true, force: true });
  server?.closeAllConnections();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
});

/** The delivery once the engine has made an attempt at it (or the deadline passed). */
async function attempted(webhookId: string, deliveryId: string): Promise<DeliveryRecord> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const got = await engine.api<DeliveryRecord>("GET", `/webhooks/${webhookId}/deliveries/${deliveryId}`);
    expect(got.status).toBe(200);
    if (got.body.attempts > 0 || Date.now() > deadline) return got.body;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("a redelivery from the engine's log to Baton's receiver", () => {
  it("is answered 200 duplicate: the engine records a success, Baton the event once", async () => {
    const { user } = await makeUser(ctx.db(), "owner");
    const connection = await upsertConnection(ctx.db(), {
      userId: user.id,
      name: uniq("conn"),
      baseUrl: engine.origin,
      token: "ork_redelivery_test_token",
      activate: true,
    });
    const receiverId = newReceiverId();
    const url = `${origin}/api/hooks/${receiverId}`;
    const webhook = await engine.api<{ id: string; secret: string }>("POST", "/webhooks", { url });
    expect(webhook.status).toBe(201);
    await saveReceiver(ctx.db(), {
      id: receiverId,
      userId: user.id,
      connectionId: connection.id,
      webhookId: webhook.body.id,
      url,
      secret: webhook.body.secret,
    });

    const sent = await engine.api<{ delivery_id: string }>("POST", `/webhooks/${webhook.body.id}/test`);
    expect(sent.status).toBe(202);
    const first = await attempted(webhook.body.id, sent.body.delivery_id);
    expect(first).toMatchObject({ status: "succeeded", response_status: 200 });
    expect(first.response_body_excerpt).toContain('"status":"received"');

    const again = await engine.api<{ delivery_id: string }>(
      "POST",
      `/webhooks/${webhook.body.id}/deliveries/${sent.body.delivery_id}/redeliver`,
    );
    expect(again.status).toBe(202);
    const redelivered = await attempted(webhook.body.id, again.body.delivery_id);
    expect(redelivered).toMatchObject({
      event_id: first.event_id,
      status: "succeeded",
      response_status: 200,
      attempts: 1,
    });
    expect(redelivered.response_body_excerpt).toContain('"status":"duplicate"');
    const hook = await engine.api<{ consecutive_failures: number; enabled: boolean }>(
      "GET",
      `/webhooks/${webhook.body.id}`,
    );
    expect(hook.body).toMatchObject({ consecutive_failures: 0, enabled: true });

    const recorded = await ctx
      .db()
      .selectFrom("received_events")
      .select("delivery_id")
      .where("event_id", "=", first.event_id)
      .execute();
    expect(recorded).toEqual([{ delivery_id: sent.body.delivery_id }]);
  });
});
