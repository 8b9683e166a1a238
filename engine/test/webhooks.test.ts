import { createHmac } from "node:crypto";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, startEngine, type EngineHandle } from "./helpers/engine.js";
import { until } from "./helpers/async.js";

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
type Answer = (
  r: Received,
  all: Received[],
) => { status: number; body?: string; delayMs?: number; headers?: Record<string, string> };

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
      const r: Received = {
        path: req.url ?? "",
        headers: req.headers,
        raw: Buffer.concat(chunks).toString("utf8"),
        at: Date.now(),
      };
      got.push(r);
      const a = rx.answer(r, got);
      setTimeout(
        () => res.writeHead(a.status, { "content-type": "text/plain", ...a.headers }).end(a.body ?? ""),
        a.delayMs ?? 0,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  rx.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return rx;
}

const sign = (secret: string, raw: string) =>
  `sha256=${createHmac("sha256", Buffer.from(secret, "utf8")).update(raw).digest("hex")}`;

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

describe("webhooks on the local engine", () => {
  let e: EngineHandle;
  let rx: Awaited<ReturnType<typeof receiver>>;
  let failing: Awaited<ReturnType<typeof receiver>>;

  beforeAll(async () => {
    rx = await receiver();
    failing = await receiver(() => ({ status: 500, body: "down" }));
    // Loopback receivers are internal addresses: the engine delivers to them only when allowed.
    e = await startEngine({
      env: {
        ORKESTR_ENGINE_WEBHOOK_RETRY_MS: String(RETRY_MS),
        ORKESTR_ENGINE_WEBHOOK_ALLOW: `${rx.url},${failing.url}`,
      },
    });
  });
  afterAll(async () => {
    await e?.stop();
    await rx?.close();
    await failing?.close();
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
    const created = await e.api("POST", "/webhooks", {
      url: `${rx.url}/lifecycle`,
      event_types: ["sandbox.created", "sandbox.terminated"],
      description: "lifecycle",
    });
    expect(created.status).toBe(201);
    const wh = created.body;
    expect(wh).toMatchObject({
      url: `${rx.url}/lifecycle`,
      event_types: ["sandbox.created", "sandbox.terminated"],
      enabled: true,
      description: "lifecycle",
    });
    expect(wh.id).toMatch(/^wh_[0-9A-Z]{26}$/);
    expect(wh.secret).toMatch(/^whsec_[A-Za-z0-9_-]{20,}$/);
    expect(wh.created_at).toMatch(ISO);
    // A disabled webhook subscribed to everything must receive nothing.
    const off = await e.api("POST", "/webhooks", { url: `${rx.url}/disabled`, enabled: false });
    expect([off.status, off.body.enabled]).toEqual([201, false]);

    const sbx = await createSandbox(e);
    expect((await e.api("DELETE", `/sandboxes/${sbx}`)).status).toBe(204);

    const byId = await until("two deliveries, each retried once", () => {
      const ids = [
        ...new Set(rx.got.filter((r) => r.path === "/lifecycle").map((r) => String(r.headers["x-orkestr-delivery"]))),
      ];
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
      expect(d).toMatchObject({
        webhook_id: wh.id,
        status: "succeeded",
        attempts: 2,
        response_status: 200,
        error: null,
        next_attempt_at: null,
      });
      expect(d.event_id).toMatch(/^evt_/);
      expect(typeof d.duration_ms).toBe("number");
      expect(d.last_attempt_at).toMatch(ISO);
      expect(d.request_body).toBeUndefined();
    }
    expect((await e.api("GET", `/webhooks/${wh.id}/deliveries?status=failed`)).body).toEqual([]);
    const paged = await e.api("GET", `/webhooks/${wh.id}/deliveries?limit=1`);
    expect(paged.body).toHaveLength(1);
    const rest = await e.api(
      "GET",
      `/webhooks/${wh.id}/deliveries?limit=1&cursor=${paged.headers.get("x-next-cursor")}`,
    );
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
    const [got] = await until("the test delivery", () =>
      rx.of(t.body.delivery_id).length ? rx.of(t.body.delivery_id) : undefined,
    );
    expect(got!.headers["x-orkestr-event"]).toBe("webhook.test");
    expect(got!.headers["x-orkestr-signature"]).toBe(sign(wh.secret, got!.raw));
    const event = JSON.parse(got!.raw);
    expect(event).toMatchObject({ type: "webhook.test", data: { webhook_id: wh.id } });
    expect(event.id).toMatch(/^evt_/);
    await until(
      "the test delivery to be logged",
      async () =>
        (await e.api("GET", `/webhooks/${wh.id}/deliveries/${t.body.delivery_id}`)).body.status === "succeeded",
    );

    const again = await e.api("POST", `/webhooks/${wh.id}/deliveries/${t.body.delivery_id}/redeliver`);
    expect(again.status).toBe(202);
    expect(again.body.delivery_id).not.toBe(t.body.delivery_id);
    const [resent] = await until("the redelivery", () =>
      rx.of(again.body.delivery_id).length ? rx.of(again.body.delivery_id) : undefined,
    );
    expect(resent!.raw).toBe(got!.raw);
    const d = await until("the redelivery to be logged", async () => {
      const r = await e.api("GET", `/webhooks/${wh.id}/deliveries/${again.body.delivery_id}`);
      return r.body.status === "succeeded" ? r.body : undefined;
    });
    expect(d).toMatchObject({
      event_id: event.id,
      event_type: "webhook.test",
      redelivered_from: t.body.delivery_id,
      attempts: 1,
    });

    expect((await e.api("GET", `/webhooks/${wh.id}/deliveries/dlv_00000000000000000000000000`)).body.code).toBe(
      "delivery_not_found",
    );
    expect((await e.api("POST", `/webhooks/${wh.id}/deliveries/dlv_00000000000000000000000000/redeliver`)).status).toBe(
      404,
    );
    const missing = await e.api("POST", "/webhooks/wh_00000000000000000000000000/test");
    expect([missing.status, missing.body.code]).toEqual([404, "webhook_not_found"]);

    // Disabled means nothing is sent: a test or a redelivery is refused with what to do, and queues nothing.
    await e.api("POST", `/webhooks/${wh.id}/disable`);
    const before = (await e.api("GET", `/webhooks/${wh.id}/deliveries`)).body.length;
    for (const path of [`/webhooks/${wh.id}/test`, `/webhooks/${wh.id}/deliveries/${t.body.delivery_id}/redeliver`]) {
      const refused = await e.api("POST", path);
      expect([refused.status, refused.body.code]).toEqual([409, "webhook_disabled"]);
      expect(refused.body.detail).toMatch(/is disabled \(disabled by request\): enable it to/);
    }
    expect((await e.api("GET", `/webhooks/${wh.id}/deliveries`)).body).toHaveLength(before);
    await e.api("POST", `/webhooks/${wh.id}/enable`);
    expect((await e.api("POST", `/webhooks/${wh.id}/test`)).status).toBe(202);
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
    const wh = (
      await e.api("POST", "/webhooks", {
        url: "https://example.invalid/hooks",
        event_types: ["template.build_finished"],
      })
    ).body;
    const list = await e.api("GET", "/webhooks");
    expect(list.status).toBe(200);
    expect(list.body.map((w: { id: string }) => w.id)).toContain(wh.id);
    expect(list.text).not.toContain("whsec_");
    const got = await e.api("GET", `/webhooks/${wh.id}`);
    expect(got.body).toMatchObject({ id: wh.id, enabled: true, event_types: ["template.build_finished"] });
    expect(got.body.secret).toBeUndefined();

    expect((await e.api("POST", `/webhooks/${wh.id}/disable`)).body).toMatchObject({
      enabled: false,
      disabled_reason: "disabled by request",
    });
    expect((await e.api("POST", `/webhooks/${wh.id}/enable`)).body).toMatchObject({
      enabled: true,
      disabled_reason: null,
      consecutive_failures: 0,
    });
    const patched = await e.api("PATCH", `/webhooks/${wh.id}`, {
      enabled: false,
      event_types: ["volume.moved", "volume.moved"],
      description: "moves",
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ enabled: false, event_types: ["volume.moved"], description: "moves" });
    for (const bad of [
      { event_types: ["sandbox.exploded"] },
      { url: "http://example.invalid/x" },
      { enabled: "yes" },
      { event_types: [] },
    ]) {
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
    const [got] = await until("the delivery after rotation", () =>
      rx.of(t.delivery_id).length ? rx.of(t.delivery_id) : undefined,
    );
    expect(got!.headers["x-orkestr-signature"]).toBe(sign(rotated.body.secret, got!.raw));
    expect(got!.headers["x-orkestr-signature"]).not.toBe(sign(wh.secret, got!.raw));
  });

  it("receivers must be HTTPS, except allowed origins; unknown event types are 422", async () => {
    const refused = [
      "http://example.invalid/hook",
      "http://10.0.0.1/hook",
      "http://0.0.0.0:8080/",
      "ftp://example.invalid/",
      "not a url",
      "/relative",
      // Loopback is no longer special: only the origins in ORKESTR_ENGINE_WEBHOOK_ALLOW are.
      "http://127.0.0.1:9/x",
      "http://127.8.9.10/x",
      "http://localhost:9/x",
      "http://[::1]:9/x",
    ];
    for (const url of refused) {
      const r = await e.api("POST", "/webhooks", { url });
      expect({ url, status: r.status, code: r.body.code }).toEqual({ url, status: 422, code: "validation_error" });
      expect(r.body.detail[0].loc).toEqual(["body", "url"]);
    }
    const accepted = ["https://example.invalid/hook", `${rx.url}/x`, `${failing.url}/y`];
    const ids: string[] = [];
    for (const url of accepted) {
      // Subscribed to an event nothing here produces, so no delivery is ever attempted.
      const r = await e.api("POST", "/webhooks", { url, event_types: ["volume.moved"] });
      expect({ url, status: r.status }).toEqual({ url, status: 201 });
      ids.push(r.body.id);
    }
    const unknown = await e.api("POST", "/webhooks", {
      url: "https://example.invalid/hook",
      event_types: ["sandbox.created", "sandbox.exploded"],
    });
    expect([unknown.status, unknown.body.code]).toEqual([422, "validation_error"]);
    expect(unknown.body.detail[0].loc).toEqual(["body", "event_types", 1]);
    expect((await e.api("POST", "/webhooks", {})).status).toBe(422);
    for (const id of ids) await e.api("DELETE", `/webhooks/${id}`);
  });

  it("retries 3 times, then 20 failed deliveries in a row auto-disable the webhook until enable re-arms it", async () => {
    const wh = (await e.api("POST", "/webhooks", { url: `${failing.url}/down`, event_types: ["volume.moved"] })).body;
    const first = (await e.api("POST", `/webhooks/${wh.id}/test`)).body.delivery_id as string;
    const d = await until("the first delivery to fail for good", async () => {
      const r = await e.api("GET", `/webhooks/${wh.id}/deliveries/${first}`);
      return r.body.status === "failed" ? r.body : undefined;
    });
    expect(d).toMatchObject({
      attempts: 4,
      max_attempts: 4,
      response_status: 500,
      next_attempt_at: null,
      response_body_excerpt: "down",
    });
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
  });
});

/**
 * A stand-in for an internal service (a database, the console, a metadata endpoint) on loopback: a
 * bare TCP server that counts connections and answers nothing. Counting connections, not HTTP
 * requests, is the point: a guard that refuses only after connecting (or a TLS handshake that
 * fails) would still have reached the service.
 */
async function internalService() {
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((s) => {
    connections++;
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe("internal receivers are refused (webhooks must not reach services inside the network)", () => {
  let e: EngineHandle | null = null;
  let allowed: Awaited<ReturnType<typeof receiver>>;
  let internal: Awaited<ReturnType<typeof internalService>>;

  beforeAll(async () => {
    allowed = await receiver();
    internal = await internalService();
    e = await startEngine({
      env: { ORKESTR_ENGINE_WEBHOOK_RETRY_MS: String(RETRY_MS), ORKESTR_ENGINE_WEBHOOK_ALLOW: allowed.url },
    });
  });
  afterAll(async () => {
    await e?.stop();
    await allowed?.close();
    await internal?.close();
  });

  const finished = async (whId: string, deliveryId: string) =>
    until(`delivery ${deliveryId} to finish`, async () => {
      const r = await e!.api("GET", `/webhooks/${whId}/deliveries/${deliveryId}`);
      return r.body.status !== "pending" ? r.body : undefined;
    });

  it("an internal IP literal, or plain http:// to an origin not allowed, is a 422 naming why, at create and PATCH", async () => {
    const cases: [string, RegExp][] = [
      [`https://127.0.0.1:${internal.port}/hook`, /127\.0\.0\.1 is a loopback address/],
      // Another port of an allowed host is another origin: not allowed.
      [`http://127.0.0.1:${internal.port}/hook`, /127\.0\.0\.1 is a loopback address/],
      ["https://10.0.0.1/hook", /10\.0\.0\.1 is a private \(RFC 1918\) address/],
      ["https://10.200.0.2/hook", /private \(RFC 1918\)/], // the sandbox range
      ["https://172.16.5.4/hook", /private \(RFC 1918\)/],
      ["https://192.168.1.1/hook", /private \(RFC 1918\)/],
      ["https://100.64.0.1/hook", /carrier-grade NAT/],
      ["https://169.254.169.254/latest/meta-data/", /169\.254\.169\.254 is the link-local cloud metadata address/],
      ["https://169.254.10.10/hook", /link-local/],
      ["https://0.0.0.0/hook", /unspecified/],
      ["https://192.0.0.8/hook", /reserved/],
      ["https://198.18.0.2/hook", /benchmarking/],
      ["https://203.0.113.7/hook", /documentation/],
      ["https://224.0.0.1/hook", /multicast/],
      ["https://240.0.0.1/hook", /reserved \(240/],
      ["https://255.255.255.255/hook", /broadcast/],
      ["https://[::1]/hook", /\[::1\] is the IPv6 loopback address/],
      ["https://[::]/hook", /unspecified/],
      ["https://[::ffff:127.0.0.1]/hook", /loopback address \(IPv4-mapped 127\.0\.0\.1\)/],
      ["https://[::ffff:169.254.169.254]/hook", /metadata address \(IPv4-mapped/],
      ["https://[fd00::1]/hook", /unique-local/],
      ["https://[fe80::1]/hook", /link-local \(fe80/],
      ["https://[ff02::1]/hook", /multicast/],
      // Other spellings of 127.0.0.1 that URL parsing normalises.
      ["https://127.1/hook", /127\.0\.0\.1 is a loopback address/],
      ["https://2130706433/hook", /127\.0\.0\.1 is a loopback address/],
      ["https://0x7f000001/hook", /127\.0\.0\.1 is a loopback address/],
      [`http://localhost:${internal.port}/hook`, /must use https:\/\/.*ORKESTR_ENGINE_WEBHOOK_ALLOW/],
    ];
    for (const [url, why] of cases) {
      const r = await e!.api("POST", "/webhooks", { url, event_types: ["volume.moved"] });
      expect({ url, status: r.status, code: r.body.code }).toEqual({ url, status: 422, code: "validation_error" });
      expect(r.body.detail[0].loc).toEqual(["body", "url"]);
      expect(r.body.detail[0].msg).toMatch(why);
    }
    const ok = await e!.api("POST", "/webhooks", { url: `${allowed.url}/patched`, event_types: ["volume.moved"] });
    expect(ok.status).toBe(201);
    for (const [url, why] of cases.slice(0, 4)) {
      const r = await e!.api("PATCH", `/webhooks/${ok.body.id}`, { url });
      expect({ url, status: r.status, code: r.body.code }).toEqual({ url, status: 422, code: "validation_error" });
      expect(r.body.detail[0].msg).toMatch(why);
    }
    expect((await e!.api("GET", `/webhooks/${ok.body.id}`)).body.url).toBe(`${allowed.url}/patched`);
    await e!.api("DELETE", `/webhooks/${ok.body.id}`);
    expect(internal.connections()).toBe(0);
  });

  it("a host name that resolves to loopback is refused when the delivery connects: a failed delivery with the reason, no connection", async () => {
    // A name is judged at connect time, by what it resolves to then (localhost: /etc/hosts, no DNS traffic).
    const created = await e!.api("POST", "/webhooks", {
      url: `https://localhost:${internal.port}/hook`,
      event_types: ["volume.moved"],
    });
    expect(created.status).toBe(201);
    const t = await e!.api("POST", `/webhooks/${created.body.id}/test`);
    expect(t.status).toBe(202);
    const d = await finished(created.body.id, t.body.delivery_id);
    expect(d).toMatchObject({ status: "failed", attempts: 4, response_status: null, response_body_excerpt: null });
    expect(d.error).toMatch(
      /^refused: localhost resolves to (127\.0\.0\.1|::1), (a|the IPv6) loopback address; webhooks may only reach public addresses.*no request was made/,
    );
    expect(internal.connections()).toBe(0);
  });

  it("an allowed origin gets deliveries and the 2 KiB excerpt; a redirect from it is not followed inward", async () => {
    allowed.answer = (r) =>
      r.path === "/bounce"
        ? { status: 302, body: "moved", headers: { location: `http://127.0.0.1:${internal.port}/admin` } }
        : { status: 200, body: "y".repeat(3000) };
    const wh = (await e!.api("POST", "/webhooks", { url: `${allowed.url}/fine`, event_types: ["volume.moved"] })).body;
    const t = (await e!.api("POST", `/webhooks/${wh.id}/test`)).body;
    const d = await finished(wh.id, t.delivery_id);
    expect(d).toMatchObject({ status: "succeeded", response_status: 200, response_body_excerpt: "y".repeat(2048) });

    // An allowed receiver that redirects towards the internal service: no 3xx is followed.
    const bouncing = (
      await e!.api("POST", "/webhooks", { url: `${allowed.url}/bounce`, event_types: ["volume.moved"] })
    ).body;
    const b = (await e!.api("POST", `/webhooks/${bouncing.id}/test`)).body;
    const bd = await finished(bouncing.id, b.delivery_id);
    expect(bd).toMatchObject({ status: "failed", response_status: 302 });
    expect(bd.error).toMatch(/HTTP 302/);
    expect(internal.connections()).toBe(0);
    allowed.answer = () => ({ status: 200 });
  });

  it("an origin taken off the allow list is refused at the next delivery, before any connection", async () => {
    const wh = (await e!.api("POST", "/webhooks", { url: `${allowed.url}/later`, event_types: ["volume.moved"] })).body;
    const dataDir = e!.dataDir!;
    expect(await e!.stop()).toBe(0);
    e = null;
    // Same data, no allow list: the stored webhook's 127.0.0.1 is judged at delivery time.
    e = await startEngine({ dataDir, env: { ORKESTR_ENGINE_WEBHOOK_RETRY_MS: String(RETRY_MS) } });
    const before = allowed.got.length;
    const t = (await e.api("POST", `/webhooks/${wh.id}/test`)).body;
    const d = await finished(wh.id, t.delivery_id);
    expect(d).toMatchObject({ status: "failed", attempts: 4, response_status: null });
    expect(d.error).toMatch(/^refused: 127\.0\.0\.1 is a loopback address/);
    expect(allowed.got.length).toBe(before);
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
    rx = await receiver(() => ({ status: 503 }));
    const env = { ORKESTR_ENGINE_WEBHOOK_RETRY_MS: "4000", ORKESTR_ENGINE_WEBHOOK_ALLOW: rx.url };
    e = await startEngine({ env });
    const dataDir = e.dataDir!;
    const wh = (await e.api("POST", "/webhooks", { url: `${rx.url}/restart`, event_types: ["volume.moved"] })).body;
    const id = (await e.api("POST", `/webhooks/${wh.id}/test`)).body.delivery_id as string;
    await until(
      "the first attempt to be logged",
      async () => (await e!.api("GET", `/webhooks/${wh.id}/deliveries/${id}`)).body.attempts === 1,
    );
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
    await until("the retry from the new engine", () => rx.of(id).length === sentBefore + 1, { timeout: 30_000 });
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
