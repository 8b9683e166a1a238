import { createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, startEngine, type EngineHandle } from "./helpers/engine.js";

/**
 * Webhooks on the local engine, against receivers this file runs on 127.0.0.1 (no traffic leaves
 * the machine). The retry gap is shortened to 200 ms; the rules are the seed's: 3 retries, then
 * 20 failed deliveries in a row disable the webhook.
 */
const RETRY_MS = 200;

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
  at: number;
}
type Answer = (r: Received, all: Received[]) => { status: number; body?: string; delayMs?: number };

/** A loopback HTTP receiver that records every request and answers as told. */
async function receiver(answer: Answer = () => ({ status: 200 })) {
  const got: Received[] = [];
  const rx = {
    url: "",
    got,
    answer,
    /** Requests that carried this delivery id. */
    of: (deliveryId: string) => got.filter((r) => r.headers["x-orkestr-delivery"] === deliveryId),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const r: Received = { path: req.url ?? "", headers: req.headers, raw: Buffer.concat(chunks).toString("utf8"), at: Date.now() };
      got.push(r);
      const a = rx.answer(r, got);
      setTimeout(() => res.writeHead(a.status, { "content-type": "text/plain" }).end(a.body ?? ""), a.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  rx.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return rx;
}

const sign = (secret: string, raw: string) => `sha256=${createHmac("sha256", Buffer.from(secret, "utf8")).update(raw).digest("hex")}`;

async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

describe("webhooks on the local engine", () => {
  let e: EngineHandle;
  let rx: Awaited<ReturnType<typeof receiver>>;

  beforeAll(async () => {
    e = await startEngine({ env: { ORKESTR_ENGINE_WEBHOOK_RETRY_MS: String(RETRY_MS) } });
    rx = await receiver();
  });
  afterAll(async () => {
    await e?.stop();
    await rx?.close();
  });

  it("delivers signed lifecycle events, retries with a stable delivery id, and logs every delivery", async () => {
    // The first request of every delivery fails, so each is retried once; the receiver deduplicates on the id.
    const seen = new Set<string>();
    rx.answer = (r) => {
      const id = String(r.headers["x-orkestr-delivery"]);
      if (!seen.has(id)) {
        seen.add(id);
        return { status: 500, body: "try again" };
      }
      return { status: 200, body: "x".repeat(5000) };
    };
    const created = await e.api("POST", "/webhooks", { url: `${rx.url}/lifecycle`, event_types: ["sandbox.created", "sandbox.terminated"], description: "lifecycle" });
    expect(created.status).toBe(201);
    const wh = created.body;
    expect(wh).toMatchObject({ url: `${rx.url}/lifecycle`, event_types: ["sandbox.created", "sandbox.terminated"], enabled: true, description: "lifecycle" });
    expect(wh.id).toMatch(/^wh_[0-9A-Z]{26}$/);
    expect(wh.secret).toMatch(/^whsec_[A-Za-z0-9_-]{20,}$/);
    expect(wh.created_at).toMatch(ISO);
    // A disabled webhook subscribed to everything must receive nothing.
    const off = await e.api("POST", "/webhooks", { url: `${rx.url}/disabled`, enabled: false });
    expect([off.status, off.body.enabled]).toEqual([201, false]);

    const sbx = await createSandbox(e);
    expect((await e.api("DELETE", `/sandboxes/${sbx}`)).status).toBe(204);

    const byId = await until("two deliveries, each retried once", () => {
      const ids = [...new Set(rx.got.filter((r) => r.path === "/lifecycle").map((r) => String(r.headers["x-orkestr-delivery"])))];
      return ids.length === 2 && ids.every((id) => rx.of(id).length === 2) ? ids : undefined;
    });
    const timeline = (await e.api("GET", `/sandboxes/${sbx}/events`)).body as { id: string; type: string }[];
    const types: string[] = [];
    for (const id of byId) {
      const [first, retry] = rx.of(id) as [Received, Received];
      expect(id).toMatch(/^dlv_[0-9A-Z]{26}$/);
      // Same delivery, same bytes: the retry is the identical request, a gap later.
      expect(retry.raw).toBe(first.raw);
      expect(retry.at - first.at).toBeGreaterThanOrEqual(RETRY_MS - 20);
      expect(first.headers["content-type"]).toBe("application/json");
      expect(first.headers["x-orkestr-signature"]).toBe(sign(wh.secret, first.raw));
      const body = JSON.parse(first.raw);
      expect(Object.keys(body).sort()).toEqual(["created_at", "data", "id", "type"]);
      expect(first.headers["x-orkestr-event"]).toBe(body.type);
      expect(body.created_at).toMatch(ISO);
      expect(body.data.sandbox.id).toBe(sbx);
      expect(body.data.sandbox.status).toBe(body.type === "sandbox.created" ? "running" : "terminated");
      expect(body.data.sandbox.preview_auth_token).toBeUndefined();
      // The event id is the activity timeline's.
      expect(timeline.find((t) => t.type === body.type)?.id).toBe(body.id);
      types.push(body.type);
    }
    expect(types.sort()).toEqual(["sandbox.created", "sandbox.terminated"]);
    expect(rx.got.filter((r) => r.path === "/disabled")).toEqual([]);

    const log = await e.api("GET", `/webhooks/${wh.id}/deliveries`);
    expect(log.status).toBe(200);
    expect(log.body).toHaveLength(2);
    for (const d of log.body) {
      expect(d).toMatchObject({ webhook_id: wh.id, status: "succeeded", attempts: 2, response_status: 200, error: null, next_attempt_at: null });
      expect(d.event_id).toMatch(/^evt_/);
      expect(typeof d.duration_ms).toBe("number");
      expect(d.last_attempt_at).toMatch(ISO);
      expect(d.request_body).toBeUndefined();
    }
    expect((await e.api("GET", `/webhooks/${wh.id}/deliveries?status=failed`)).body).toEqual([]);
    const paged = await e.api("GET", `/webhooks/${wh.id}/deliveries?limit=1`);
    expect(paged.body).toHaveLength(1);
    const rest = await e.api("GET", `/webhooks/${wh.id}/deliveries?limit=1&cursor=${paged.headers.get("x-next-cursor")}`);
    expect(rest.body.map((d: { id: string }) => d.id)).toEqual([log.body[1].id]);

    const detail = await e.api("GET", `/webhooks/${wh.id}/deliveries/${byId[0]}`);
    expect(detail.status).toBe(200);
    expect(detail.body.request_body).toBe(rx.of(byId[0]!)[0]!.raw);
    expect(detail.body.response_body_excerpt).toBe("x".repeat(2048));
    expect((await e.api("GET", `/webhooks/${wh.id}`)).body.consecutive_failures).toBe(0);
    rx.answer = () => ({ status: 200 });
  });

  it("test sends webhook.test (202 {delivery_id}); redeliver sends the same event as a new delivery", async () => {
    const wh = (await e.api("POST", "/webhooks", { url: `${rx.url}/test`, event_types: ["volume.moved"] })).body;
    const t = await e.api("POST", `/webhooks/${wh.id}/test`);
    expect(t.status).toBe(202);
    expect(t.body.delivery_id).toMatch(/^dlv_/);
    const [got] = await until("the test delivery", () => (rx.of(t.body.delivery_id).length ? rx.of(t.body.delivery_id) : undefined));
    expect(got!.headers["x-orkestr-event"]).toBe("webhook.test");
    expect(got!.headers["x-orkestr-signature"]).toBe(sign(wh.secret, got!.raw));
    const event = JSON.parse(got!.raw);
    expect(event).toMatchObject({ type: "webhook.test", data: { webhook_id: wh.id } });
    expect(event.id).toMatch(/^evt_/);
    await until("the test delivery to be logged", async () => (await e.api("GET", `/webhooks/${wh.id}/deliveries/${t.body.delivery_id}`)).body.status === "succeeded");

    const again = await e.api("POST", `/webhooks/${wh.id}/deliveries/${t.body.delivery_id}/redeliver`);
    expect(again.status).toBe(202);
    expect(again.body.delivery_id).not.toBe(t.body.delivery_id);
    const [resent] = await until("the redelivery", () => (rx.of(again.body.delivery_id).length ? rx.of(again.body.delivery_id) : undefined));
    expect(resent!.raw).toBe(got!.raw);
    const d = await until("the redelivery to be logged", async () => {
      const r = await e.api("GET", `/webhooks/${wh.id}/deliveries/${again.body.delivery_id}`);
      return r.body.status === "succeeded" ? r.body : undefined;
    });
    expect(d).toMatchObject({ event_id: event.id, event_type: "webhook.test", redelivered_from: t.body.delivery_id, attempts: 1 });

    expect((await e.api("GET", `/webhooks/${wh.id}/deliveries/dlv_00000000000000000000000000`)).body.code).toBe("delivery_not_found");
    expect((await e.api("POST", `/webhooks/${wh.id}/deliveries/dlv_00000000000000000000000000/redeliver`)).status).toBe(404);
    const missing = await e.api("POST", "/webhooks/wh_00000000000000000000000000/test");
    expect([missing.status, missing.body.code]).toEqual([404, "webhook_not_found"]);
  });

  it("a slow receiver never holds up the request that caused the event; duration_ms shows its time", async () => {
    rx.answer = (r) => (r.path === "/slow" ? { status: 200, delayMs: 1500 } : { status: 200 });
    const wh = (await e.api("POST", "/webhooks", { url: `${rx.url}/slow`, event_types: ["volume.moved"] })).body;
    const started = Date.now();
    const t = await e.api("POST", `/webhooks/${wh.id}/test`);
    expect(t.status).toBe(202);
    expect(Date.now() - started).toBeLessThan(1000);
    const d = await until("the slow delivery", async () => {
      const r = await e.api("GET", `/webhooks/${wh.id}/deliveries/${t.body.delivery_id}`);
      return r.body.status === "succeeded" ? r.body : undefined;
    });
    expect(d.duration_ms).toBeGreaterThanOrEqual(1400);
    expect(d.duration_ms).toBeLessThan(10_000);
    rx.answer = () => ({ status: 200 });
  });

  it("lists and gets without the secret; enable, disable, PATCH and delete", async () => {
    const wh = (await e.api("POST", "/webhooks", { url: "https://example.invalid/hooks", event_types: ["template.build_finished"] })).body;
    const list = await e.api("GET", "/webhooks");
    expect(list.status).toBe(200);
    expect(list.body.map((w: { id: string }) => w.id)).toContain(wh.id);
    expect(list.text).not.toContain("whsec_");
    const got = await e.api("GET", `/webhooks/${wh.id}`);
    expect(got.body).toMatchObject({ id: wh.id, enabled: true, event_types: ["template.build_finished"] });
    expect(got.body.secret).toBeUndefined();

    expect((await e.api("POST", `/webhooks/${wh.id}/disable`)).body).toMatchObject({ enabled: false, disabled_reason: "disabled by request" });
    expect((await e.api("POST", `/webhooks/${wh.id}/enable`)).body).toMatchObject({ enabled: true, disabled_reason: null, consecutive_failures: 0 });
    const patched = await e.api("PATCH", `/webhooks/${wh.id}`, { enabled: false, event_types: ["volume.moved", "volume.moved"], description: "moves" });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ enabled: false, event_types: ["volume.moved"], description: "moves" });
    for (const bad of [{ event_types: ["sandbox.exploded"] }, { url: "http://example.invalid/x" }, { enabled: "yes" }, { event_types: [] }]) {
      const r = await e.api("PATCH", `/webhooks/${wh.id}`, bad);
      expect([r.status, r.body.code]).toEqual([422, "validation_error"]);
    }

    expect((await e.api("DELETE", `/webhooks/${wh.id}`)).status).toBe(204);
    expect((await e.api("GET", `/webhooks/${wh.id}`)).body.code).toBe("webhook_not_found");
    expect((await e.api("GET", `/webhooks/${wh.id}/deliveries`)).status).toBe(404);
    expect((await e.api("DELETE", `/webhooks/${wh.id}`)).status).toBe(404);
  });

  it("rotate-secret: the new secret verifies the next delivery, the old one does not", async () => {
    const wh = (await e.api("POST", "/webhooks", { url: `${rx.url}/rotate`, event_types: ["volume.moved"] })).body;
    const rotated = await e.api("POST", `/webhooks/${wh.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(wh.secret);
    expect((await e.api("GET", `/webhooks/${wh.id}`)).text).not.toContain(rotated.body.secret);
    const t = (await e.api("POST", `/webhooks/${wh.id}/test`)).body;
    const [got] = await until("the delivery after rotation", () => (rx.of(t.delivery_id).length ? rx.of(t.delivery_id) : undefined));
    expect(got!.headers["x-orkestr-signature"]).toBe(sign(rotated.body.secret, got!.raw));
    expect(got!.headers["x-orkestr-signature"]).not.toBe(sign(wh.secret, got!.raw));
  });

  it("receivers must be HTTPS, except loopback http://; unknown event types are 422", async () => {
    const refused = ["http://example.invalid/hook", "http://10.0.0.1/hook", "http://0.0.0.0:8080/", "ftp://example.invalid/", "not a url", "/relative"];
    for (const url of refused) {
      const r = await e.api("POST", "/webhooks", { url });
      expect({ url, status: r.status, code: r.body.code }).toEqual({ url, status: 422, code: "validation_error" });
      expect(r.body.detail[0].loc).toEqual(["body", "url"]);
    }
    const accepted = ["https://example.invalid/hook", "http://127.0.0.1:9/x", "http://127.8.9.10/x", "http://localhost:9/x", "http://[::1]:9/x"];
    const ids: string[] = [];
    for (const url of accepted) {
      // Subscribed to an event nothing here produces, so no delivery is ever attempted.
      const r = await e.api("POST", "/webhooks", { url, event_types: ["volume.moved"] });
      expect({ url, status: r.status }).toEqual({ url, status: 201 });
      ids.push(r.body.id);
    }
    const unknown = await e.api("POST", "/webhooks", { url: "https://example.invalid/hook", event_types: ["sandbox.created", "sandbox.exploded"] });
    expect([unknown.status, unknown.body.code]).toEqual([422, "validation_error"]);
    expect(unknown.body.detail[0].loc).toEqual(["body", "event_types", 1]);
    expect((await e.api("POST", "/webhooks", {})).status).toBe(422);
    for (const id of ids) await e.api("DELETE", `/webhooks/${id}`);
  });

  it("retries 3 times, then 20 failed deliveries in a row auto-disable the webhook until enable re-arms it", async () => {
    const failing = await receiver(() => ({ status: 500, body: "down" }));
    try {
      const wh = (await e.api("POST", "/webhooks", { url: `${failing.url}/down`, event_types: ["volume.moved"] })).body;
      const first = (await e.api("POST", `/webhooks/${wh.id}/test`)).body.delivery_id as string;
      const d = await until("the first delivery to fail for good", async () => {
        const r = await e.api("GET", `/webhooks/${wh.id}/deliveries/${first}`);
        return r.body.status === "failed" ? r.body : undefined;
      });
      expect(d).toMatchObject({ attempts: 4, max_attempts: 4, response_status: 500, next_attempt_at: null, response_body_excerpt: "down" });
      expect(d.error).toMatch(/500/);
      const attempts = failing.of(first);
      expect(attempts).toHaveLength(4);
      for (let i = 1; i < 4; i++) expect(attempts[i]!.at - attempts[i - 1]!.at).toBeGreaterThanOrEqual(RETRY_MS - 20);
      expect(new Set(attempts.map((a) => a.raw)).size).toBe(1);
      expect((await e.api("GET", `/webhooks/${wh.id}`)).body).toMatchObject({ enabled: true, consecutive_failures: 1 });

      for (let i = 0; i < 19; i++) expect((await e.api("POST", `/webhooks/${wh.id}/test`)).status).toBe(202);
      const disabled = await until("the auto-disable", async () => {
        const r = await e.api("GET", `/webhooks/${wh.id}`);
        return r.body.enabled === false ? r.body : undefined;
      });
      expect(disabled.consecutive_failures).toBe(20);
      expect(disabled.disabled_reason).toMatch(/20 consecutive failed deliveries/);
      const failed = await e.api("GET", `/webhooks/${wh.id}/deliveries?status=failed&limit=100`);
      expect(failed.body).toHaveLength(20);
      expect(failing.got).toHaveLength(80);

      const enabled = await e.api("POST", `/webhooks/${wh.id}/enable`);
      expect(enabled.body).toMatchObject({ enabled: true, consecutive_failures: 0, disabled_reason: null });
    } finally {
      await failing.close();
    }
  });
});

describe("pending deliveries across an engine restart", () => {
  let e: EngineHandle | null = null;
  let rx: Awaited<ReturnType<typeof receiver>>;
  afterAll(async () => {
    await e?.stop();
    await rx?.close();
  });

  it("a delivery queued for retry when the engine stops is sent by the next run, same id and body", async () => {
    // A retry gap long enough that the engine is stopped before the retry falls due.
    const env = { ORKESTR_ENGINE_WEBHOOK_RETRY_MS: "4000" };
    rx = await receiver(() => ({ status: 503 }));
    e = await startEngine({ env });
    const dataDir = e.dataDir!;
    const wh = (await e.api("POST", "/webhooks", { url: `${rx.url}/restart`, event_types: ["volume.moved"] })).body;
    const id = (await e.api("POST", `/webhooks/${wh.id}/test`)).body.delivery_id as string;
    await until("the first attempt to be logged", async () => (await e!.api("GET", `/webhooks/${wh.id}/deliveries/${id}`)).body.attempts === 1);
    const before = (await e.api("GET", `/webhooks/${wh.id}/deliveries/${id}`)).body;
    expect(before).toMatchObject({ status: "pending", attempts: 1, response_status: 503 });
    expect(before.next_attempt_at).toMatch(ISO);
    expect(await e.stop()).toBe(0);
    e = null;
    // Normally 1; a very slow shutdown may have let one retry out first. Either way retries remain.
    const sentBefore = rx.of(id).length;
    expect(sentBefore).toBeGreaterThanOrEqual(1);
    expect(sentBefore).toBeLessThan(4);

    rx.answer = () => ({ status: 204 });
    e = await startEngine({ env, dataDir });
    await until("the retry from the new engine", () => rx.of(id).length === sentBefore + 1, 30_000);
    const [first, second] = [rx.of(id)[0]!, rx.of(id)[sentBefore]!];
    expect(second.raw).toBe(first.raw);
    expect(second.headers["x-orkestr-signature"]).toBe(sign(wh.secret, second.raw));
    const after = await until("the retry to be logged", async () => {
      const r = await e!.api("GET", `/webhooks/${wh.id}/deliveries/${id}`);
      return r.body.status === "succeeded" ? r.body : undefined;
    });
    expect(after).toMatchObject({ attempts: sentBefore + 1, response_status: 204, next_attempt_at: null });
  });
});
