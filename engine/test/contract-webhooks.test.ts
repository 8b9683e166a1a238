import { createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { target, type EngineHandle } from "./helpers/engine.js";

/**
 * Webhooks (/v1/webhooks) and usage (GET /v1/sandboxes/usage) over HTTP. Runs against the local engine, or any v1 server
 * with ORKESTR_API_URL and ORKESTR_API_KEY set: then nothing here makes the server send a delivery
 * (its webhooks point at https://example.invalid and subscribe to an event these checks never
 * cause), and the loopback-receiver checks are skipped.
 */
let e: EngineHandle;
const created: string[] = [];
const local = !process.env.ORKESTR_API_URL;
const REMOTE_SAFE_URL = "https://example.invalid/orkestr-contract";
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** The loopback receiver of the local-only check; started first, so the engine can be told to allow it. */
const got: { headers: http.IncomingHttpHeaders; raw: string }[] = [];
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    got.push({ headers: req.headers, raw: Buffer.concat(chunks).toString("utf8") });
    res.writeHead(200).end("ok");
  });
});
let receiverOrigin = "";

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  receiverOrigin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Loopback receivers are internal: the engine delivers to one only when its origin is allowed.
  e = await target({ env: { ORKESTR_ENGINE_WEBHOOK_ALLOW: receiverOrigin } });
});
afterAll(async () => {
  for (const id of created) await e.api("DELETE", `/webhooks/${id}`).catch(() => undefined);
  await e?.stop();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

async function webhook(body: Record<string, unknown>) {
  const r = await e.api("POST", "/webhooks", body);
  if (r.status !== 201) throw new Error(`webhook create failed: ${r.status} ${r.text}`);
  created.push(r.body.id);
  return r.body;
}

describe("webhooks", () => {
  it("create returns the whsec_ secret once; list and get never do", async () => {
    const wh = await webhook({ url: REMOTE_SAFE_URL, event_types: ["volume.moved"], description: "contract" });
    expect(wh.id).toMatch(/^wh_/);
    expect(wh.secret).toMatch(/^whsec_/);
    expect(wh).toMatchObject({ url: REMOTE_SAFE_URL, event_types: ["volume.moved"], enabled: true });
    expect(wh.created_at).toMatch(ISO);
    const list = await e.api("GET", "/webhooks");
    expect(list.status).toBe(200);
    expect(Array.isArray(list.body)).toBe(true);
    expect(list.body.map((w: { id: string }) => w.id)).toContain(wh.id);
    expect(list.text).not.toContain(wh.secret);
    const got = await e.api("GET", `/webhooks/${wh.id}`);
    expect(got.status).toBe(200);
    expect(got.body.id).toBe(wh.id);
    expect(got.text).not.toContain(wh.secret);
  });

  it("enable, disable, the PATCH alias, rotate-secret and delete", async () => {
    const wh = await webhook({ url: REMOTE_SAFE_URL, event_types: ["volume.moved"] });
    const off = await e.api("POST", `/webhooks/${wh.id}/disable`);
    expect([off.status, off.body.enabled]).toEqual([200, false]);
    const on = await e.api("POST", `/webhooks/${wh.id}/enable`);
    expect([on.status, on.body.enabled]).toEqual([200, true]);
    const patched = await e.api("PATCH", `/webhooks/${wh.id}`, { enabled: false });
    expect([patched.status, patched.body.enabled]).toEqual([200, false]);
    const rotated = await e.api("POST", `/webhooks/${wh.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(wh.secret);
    const deliveries = await e.api("GET", `/webhooks/${wh.id}/deliveries`);
    expect(deliveries.status).toBe(200);
    expect(deliveries.body).toEqual([]);
    expect((await e.api("DELETE", `/webhooks/${wh.id}`)).status).toBe(204);
    const gone = await e.api("GET", `/webhooks/${wh.id}`);
    expect([gone.status, gone.body.code]).toEqual([404, "webhook_not_found"]);
  });

  it("422 for a non-HTTPS receiver and for an unknown event type; 404 for an unknown webhook", async () => {
    const plain = await e.api("POST", "/webhooks", { url: "http://example.invalid/hook" });
    expect([plain.status, plain.body.code]).toEqual([422, "validation_error"]);
    const unknown = await e.api("POST", "/webhooks", { url: REMOTE_SAFE_URL, event_types: ["sandbox.exploded"] });
    expect([unknown.status, unknown.body.code]).toEqual([422, "validation_error"]);
    for (const [method, p] of [
      ["GET", ""],
      ["POST", "/test"],
      ["GET", "/deliveries"],
      ["DELETE", ""],
    ] as const) {
      const r = await e.api(method, `/webhooks/wh_00000000000000000000000000${p}`);
      expect({ method, p, status: r.status, code: r.body.code }).toEqual({
        method,
        p,
        status: 404,
        code: "webhook_not_found",
      });
    }
  });

  it.runIf(local)(
    "a test delivery reaches an allowed loopback receiver, signed with the secret, and is logged",
    async () => {
      const wh = await webhook({ url: `${receiverOrigin}/hook`, event_types: ["volume.moved"] });
      const t = await e.api("POST", `/webhooks/${wh.id}/test`);
      expect(t.status).toBe(202);
      expect(t.body.delivery_id).toMatch(/^dlv_/);
      const end = Date.now() + 15_000;
      while (!got.length && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      expect(got).toHaveLength(1);
      const [d] = got;
      expect(d!.headers["x-orkestr-event"]).toBe("webhook.test");
      expect(d!.headers["x-orkestr-delivery"]).toBe(t.body.delivery_id);
      const expected = `sha256=${createHmac("sha256", Buffer.from(wh.secret, "utf8")).update(d!.raw).digest("hex")}`;
      expect(d!.headers["x-orkestr-signature"]).toBe(expected);
      const body = JSON.parse(d!.raw);
      expect(body).toMatchObject({ type: "webhook.test" });
      expect(body.id).toMatch(/^evt_/);
      expect(body.created_at).toMatch(ISO);
      let logged;
      while (Date.now() < end) {
        logged = (await e.api("GET", `/webhooks/${wh.id}/deliveries/${t.body.delivery_id}`)).body;
        if (logged.status !== "pending") break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(logged).toMatchObject({
        id: t.body.delivery_id,
        event_type: "webhook.test",
        status: "succeeded",
        attempts: 1,
        response_status: 200,
        request_body: d!.raw,
        response_body_excerpt: "ok",
      });
      const list = (await e.api("GET", `/webhooks/${wh.id}/deliveries`)).body;
      expect(list.map((x: { id: string }) => x.id)).toEqual([t.body.delivery_id]);
      for (const k of [
        "event_id",
        "event_type",
        "status",
        "attempts",
        "response_status",
        "duration_ms",
        "created_at",
        "last_attempt_at",
        "next_attempt_at",
      ])
        expect(list[0]).toHaveProperty(k);
      const again = await e.api("POST", `/webhooks/${wh.id}/deliveries/${t.body.delivery_id}/redeliver`);
      expect(again.status).toBe(202);
    },
  );
});

describe("usage", () => {
  it("reports totals, a daily series and the costliest sandboxes, at /v1/sandboxes/usage and /v1/usage", async () => {
    for (const p of [
      "/sandboxes/usage?from=2025-06-01&to=2025-06-30&granularity=day",
      "/usage?from=2025-06-01&to=2025-06-30",
    ]) {
      const r = await e.api("GET", p);
      expect(r.status).toBe(200);
      const u = r.body;
      expect(u.currency).toBe("EUR");
      expect(Date.parse(u.from)).toBe(Date.parse("2025-06-01T00:00:00Z"));
      expect(Date.parse(u.to)).toBeGreaterThanOrEqual(Date.parse("2025-06-30T23:59:59Z"));
      for (const k of ["cpu_seconds", "gb_seconds", "sandboxes_created", "cost_eur"])
        expect(typeof u.totals[k]).toBe("number");
      expect(typeof u.trial_credit_eur).toBe("number");
      expect(typeof u.trial_credit_used_eur).toBe("number");
      expect(Array.isArray(u.series)).toBe(true);
      for (const d of u.series) {
        expect(d.date).toMatch(/^2025-06-\d{2}$/);
        for (const k of ["cpu_seconds", "gb_seconds", "sandboxes_created", "cost_eur"])
          expect(typeof d[k]).toBe("number");
      }
      expect(Array.isArray(u.by_sandbox)).toBe(true);
      expect(u.by_sandbox.length).toBeLessThanOrEqual(50);
    }
  });

  it("agrees with the limits on the trial credit", async () => {
    const u = (await e.api("GET", "/sandboxes/usage")).body;
    const l = (await e.api("GET", "/sandboxes/limits")).body;
    expect(u.trial_credit_eur).toBe(l.trial_credit_eur);
    expect(u.trial_credit_used_eur).toBeCloseTo(l.trial_credit_used_eur, 4);
  });

  it("refuses garbage and reversed ranges with a 4xx {detail, code}", async () => {
    for (const q of ["from=not-a-date", "to=2025-99-99", "from=2025-06-10&to=2025-06-01"]) {
      const r = await e.api("GET", `/sandboxes/usage?${q}`);
      expect({ q, status: [400, 422].includes(r.status) }).toEqual({ q, status: true });
      expect(typeof r.body.code).toBe("string");
      expect(r.body.detail).toBeTruthy();
    }
  });
});
