import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../helpers/async.js";
import { injectEngine, type InjectEngine } from "../helpers/inject.js";

/**
 * ORKESTR_ENGINE_WEBHOOK_ALLOW as `npm start` sets it beside a console: the console's receiver
 * prefix, `<origin>/api/hooks/`. A tenant's webhook may reach that receiver, and not the rest of the
 * console's origin (its /login or /api/setup, whose answers the delivery log would show the tenant),
 * neither when saved nor when a delivery connects. The "console" here is a plain server on loopback
 * that records what it is asked.
 */
let e: InjectEngine;
let consoleServer: http.Server;
let origin = "";
const seen: string[] = [];

beforeAll(async () => {
  consoleServer = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    res.end(JSON.stringify({ page: "whatever the console answers" }));
  });
  await new Promise<void>((r) => consoleServer.listen(0, "127.0.0.1", r));
  origin = `http://127.0.0.1:${(consoleServer.address() as AddressInfo).port}`;
  e = await injectEngine({
    ORKESTR_ENGINE_WEBHOOK_ALLOW: `${origin}/api/hooks/`,
    ORKESTR_ENGINE_WEBHOOK_RETRY_MS: "50",
  });
});
afterAll(async () => {
  await e?.close();
  await new Promise<void>((r) => consoleServer?.close(() => r()));
});

describe("a receiver prefix in ORKESTR_ENGINE_WEBHOOK_ALLOW", () => {
  it("refuses webhooks to the console's other paths when created or changed, and takes its receiver", async () => {
    for (const path of [
      "/login",
      "/api/setup",
      "/api/hooks/../login",
      "/api/hooks/..%2flogin",
      "/api/hooks/x?to=/login",
    ]) {
      const r = await e.call("POST", "/v1/webhooks", { url: `${origin}${path}` });
      expect([r.status, r.body.code], path).toEqual([422, "validation_error"]);
      expect(r.body.detail[0].loc, path).toEqual(["body", "url"]);
    }
    const created = await e.call("POST", "/v1/webhooks", { url: `${origin}/api/hooks/rcv_1` });
    expect(created.status, created.text).toBe(201);
    const moved = await e.call("PATCH", `/v1/webhooks/${created.body.id}`, { url: `${origin}/api/setup` });
    expect([moved.status, moved.body.code]).toEqual([422, "validation_error"]);
    expect(moved.body.detail[0].msg).toMatch(/only URLs under .*\/api\/hooks\/ are allowed/);
    expect((await e.call("GET", `/v1/webhooks/${created.body.id}`)).body.url).toBe(`${origin}/api/hooks/rcv_1`);
  });

  it("delivers to the receiver, and refuses a stored webhook elsewhere on the origin without a request", async () => {
    const wh = (await e.call("POST", "/v1/webhooks", { url: `${origin}/api/hooks/rcv_2` })).body;
    const ok = await e.call("POST", `/v1/webhooks/${wh.id}/test`);
    expect(ok.status).toBe(202);
    await eventually(() => expect(seen).toContain("POST /api/hooks/rcv_2"));

    // A webhook saved while the whole origin was allowed (the old default) now points at /login.
    e.engine.ctx.db.prepare("UPDATE webhooks SET url = ? WHERE id = ?").run(`${origin}/login`, wh.id);
    const t = await e.call("POST", `/v1/webhooks/${wh.id}/test`);
    expect(t.status).toBe(202);
    const d = await eventually(async () => {
      const r = await e.call("GET", `/v1/webhooks/${wh.id}/deliveries/${t.body.delivery_id}`);
      expect(r.body.attempts).toBeGreaterThan(0);
      return r.body;
    });
    expect(d).toMatchObject({ response_status: null, response_body_excerpt: null });
    expect(d.error).toMatch(/^refused: 127\.0\.0\.1 is a loopback address; .*no request was made/);
    expect(seen.filter((s) => !s.startsWith("POST /api/hooks/"))).toEqual([]);
  });
});
