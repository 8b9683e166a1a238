import "server-only";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signBody } from "../../engine/src/services/webhooks/signing";
import { startEngine, type EngineHandle } from "../../engine/test/helpers/engine";
import { verifyWebhook, WEBHOOK_TOLERANCE_MS, type VerifyWebhookInput } from "./webhook-signature";

// The console's check of a delivery, against signatures made by the engine's own signing code:
// the function in-process, and a real engine's delivery over HTTP to a receiver on 127.0.0.1.

const SECRET = "whsec_3q2-7wAAAAAAAAAAAAAAAAAAAAAAAAAA";
const NOW = Date.parse("2026-12-03T12:00:00Z");

function delivery(over: { createdAt?: number; type?: string; id?: string } = {}) {
  const body = JSON.stringify({
    id: over.id ?? "evt_01JEXAMPLE",
    type: over.type ?? "sandbox.paused",
    created_at: new Date(over.createdAt ?? NOW - 2_000).toISOString(),
    data: { sandbox: { id: "sbx_1", status: "paused", metadata: { note: "ünïcode ✓" } } },
  });
  return { body, signature: signBody(SECRET, body) };
}

const verify = (input: Partial<VerifyWebhookInput> & Pick<VerifyWebhookInput, "body" | "signature">) =>
  verifyWebhook({ secret: SECRET, now: NOW, ...input });

describe("verifyWebhook against the engine's signBody", () => {
  it("accepts a signed delivery, as bytes or as a string, and returns the signed event", () => {
    const d = delivery();
    for (const body of [d.body, Buffer.from(d.body, "utf8"), new TextEncoder().encode(d.body)]) {
      const v = verify({ body, signature: d.signature, eventType: "sandbox.paused" });
      expect(v).toEqual({
        ok: true,
        event: {
          id: "evt_01JEXAMPLE",
          type: "sandbox.paused",
          createdAt: new Date(NOW - 2_000),
          data: { sandbox: { id: "sbx_1", status: "paused", metadata: { note: "ünïcode ✓" } } },
        },
      });
    }
  });

  it("refuses a missing or malformed signature header", () => {
    const d = delivery();
    expect(verify({ body: d.body, signature: null })).toMatchObject({ ok: false, reason: "missing_signature" });
    expect(verify({ body: d.body, signature: "" })).toMatchObject({ ok: false, reason: "missing_signature" });
    for (const bad of [d.signature.slice(7), `sha1=${d.signature.slice(7)}`, `${d.signature}00`, "v1,abc="])
      expect(verify({ body: d.body, signature: bad }), bad).toMatchObject({
        ok: false,
        reason: "malformed_signature",
      });
  });

  it("refuses a tampered body: one byte changed, re-serialised, or signed with another secret", () => {
    const d = delivery();
    const flipped = d.body.replace('"paused"', '"running"');
    expect(verify({ body: flipped, signature: d.signature })).toMatchObject({ ok: false, reason: "bad_signature" });
    const reformatted = JSON.stringify(JSON.parse(d.body), null, 1);
    expect(verify({ body: reformatted, signature: d.signature })).toMatchObject({
      ok: false,
      reason: "bad_signature",
    });
    expect(verify({ body: d.body, signature: signBody("whsec_other", d.body) })).toMatchObject({
      ok: false,
      reason: "bad_signature",
    });
    // The key is the whole whsec_… string: the part after the prefix alone does not verify.
    expect(verify({ body: d.body, signature: signBody(SECRET.slice("whsec_".length), d.body) })).toMatchObject({
      ok: false,
      reason: "bad_signature",
    });
  });

  it("refuses a tampered timestamp: moving created_at breaks the signature", () => {
    const d = delivery({ createdAt: NOW - 3_600_000 });
    const refreshed = d.body.replace(new Date(NOW - 3_600_000).toISOString(), new Date(NOW).toISOString());
    expect(refreshed).not.toBe(d.body);
    expect(verify({ body: refreshed, signature: d.signature })).toMatchObject({ ok: false, reason: "bad_signature" });
  });

  it("refuses events older than the tolerance, or dated too far ahead; accepts the edges", () => {
    const old = delivery({ createdAt: NOW - WEBHOOK_TOLERANCE_MS - 1_000 });
    expect(verify(old)).toMatchObject({ ok: false, reason: "stale", detail: "the event is 301 s old (at most 300 s)" });
    const edge = delivery({ createdAt: NOW - WEBHOOK_TOLERANCE_MS });
    expect(verify(edge).ok).toBe(true);
    const ahead = delivery({ createdAt: NOW + WEBHOOK_TOLERANCE_MS + 1_000 });
    expect(verify(ahead)).toMatchObject({ ok: false, reason: "from_the_future" });
    const skewed = delivery({ createdAt: NOW + 30_000 });
    expect(verify(skewed).ok).toBe(true);
    // A receiver that also takes old redeliveries says so.
    expect(verify({ ...old, toleranceMs: 3_600_000 }).ok).toBe(true);
  });

  it("refuses an unsigned X-Orkestr-Event that disagrees with the signed type", () => {
    const d = delivery({ type: "webhook.test" });
    expect(verify({ ...d, eventType: "sandbox.terminated" })).toMatchObject({ ok: false, reason: "event_mismatch" });
    expect(verify({ ...d, eventType: "webhook.test" }).ok).toBe(true);
  });

  it("refuses signed bodies that are not an event", () => {
    for (const body of ["not json", "null", JSON.stringify({ id: "evt_1", type: "x" }), JSON.stringify([1])]) {
      expect(verify({ body, signature: signBody(SECRET, body) }), body).toMatchObject({
        ok: false,
        reason: "malformed_body",
      });
    }
  });

  it("takes several secrets while a rotation settles", () => {
    const d = delivery();
    expect(verifyWebhook({ secret: ["whsec_new", SECRET], now: NOW, ...d }).ok).toBe(true);
    expect(verifyWebhook({ secret: ["whsec_new", "whsec_older"], now: NOW, ...d })).toMatchObject({
      ok: false,
      reason: "bad_signature",
    });
    expect(verifyWebhook({ secret: [], now: NOW, ...d })).toMatchObject({ ok: false, reason: "bad_signature" });
  });
});

describe("verifyWebhook against a real engine's delivery", () => {
  let engine: EngineHandle;
  let server: http.Server;
  let origin = "";
  const got: { headers: http.IncomingHttpHeaders; raw: Buffer }[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        got.push({ headers: req.headers, raw: Buffer.concat(chunks) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // A loopback receiver is internal: the engine delivers to it only when its origin is allowed.
    engine = await startEngine({ env: { ORKESTR_ENGINE_WEBHOOK_ALLOW: origin } });
  });
  afterAll(async () => {
    await engine?.stop();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
  });

  it("verifies the engine's test delivery with the secret it returned, and only with that", async () => {
    const created = await engine.api<{ id: string; secret: string }>("POST", "/webhooks", {
      url: `${origin}/api/hooks/wh`,
    });
    expect(created.status).toBe(201);
    const sent = await engine.api<{ delivery_id: string }>("POST", `/webhooks/${created.body.id}/test`);
    expect(sent.status).toBe(202);
    const deadline = Date.now() + 20_000;
    while (!got.some((r) => r.headers["x-orkestr-delivery"] === sent.body.delivery_id)) {
      if (Date.now() > deadline) throw new Error("the engine's test delivery never arrived");
      await new Promise((r) => setTimeout(r, 50));
    }
    const d = got.find((r) => r.headers["x-orkestr-delivery"] === sent.body.delivery_id)!;
    const input = {
      body: d.raw,
      signature: d.headers["x-orkestr-signature"] as string,
      eventType: d.headers["x-orkestr-event"] as string,
    };
    const v = verifyWebhook({ secret: created.body.secret, ...input });
    expect(v).toMatchObject({ ok: true, event: { type: "webhook.test" } });
    expect(v.ok && v.event.id).toMatch(/^evt_/);
    expect(verifyWebhook({ secret: "whsec_wrong", ...input })).toMatchObject({ ok: false, reason: "bad_signature" });
    // Replayed an hour later, the same bytes are stale.
    expect(verifyWebhook({ secret: created.body.secret, ...input, now: Date.now() + 3_600_000 })).toMatchObject({
      ok: false,
      reason: "stale",
    });
  });
});
